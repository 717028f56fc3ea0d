"""accounting_models.py — small, structurally different models for the exporter's
memory-accounting test (test_accounting.py). Each builder follows the MODEL contract of
tools/sfc-export (`module:callable`, docs/exporter.md): it takes `batch=` and returns
(module, (inputs, target), loss_fn). Pass them as `accounting_models:NAME` with this
directory on sys.path (the exporter adds the current directory).

  cnn_bn       conv + BatchNorm + ReLU twice, max-pool, linear, cross-entropy
  autoencoder  2-conv autoencoder (3 -> 16 -> 3 channels) at 128x128, MSE loss
               (its 0-d loss holds a B*C*H*W storage, and the convolutions use scratch)
  lstm         2-layer nn.LSTM over 16 steps, linear head on the last step
  gru          nn.GRU, linear head on every step
  transformer  token embedding + nn.TransformerEncoderLayer (self-attention) + an LM
               head whose weight is TIED to the embedding
  checkpoint   two MLP blocks under torch.utils.checkpoint (the reentrant and the
               non-reentrant variant)
  inplace      chains of in-place ops (add_, relu_, clamp_, mul_, sigmoid_, += on a view)
  dict_output  forward returns {"logits": ..., "aux": (pooled, features)}; the loss
               combines cross-entropy and MSE over the dict and tuple
  rng_states   (not in ALL) memory held only between two ops: the export warns
"""
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint as _checkpoint


def cnn_bn(batch=4, image_size=16):
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
        nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * (image_size // 2) ** 2, 10))
    x = torch.randn(batch, 3, image_size, image_size)
    return m, ((x,), torch.randint(0, 10, (batch,))), F.cross_entropy


class AutoEncoder(nn.Module):
    def __init__(self, ch=3, width=16):
        super().__init__()
        self.enc = nn.Conv2d(ch, width, 3, padding=1)
        self.dec = nn.Conv2d(width, ch, 3, padding=1)

    def forward(self, x):
        return self.dec(torch.relu(self.enc(x)))


def autoencoder(batch=2, image_size=128):
    x = torch.randn(batch, 3, image_size, image_size)
    return AutoEncoder(), ((x,), x.clone()), F.mse_loss


class Recurrent(nn.Module):
    def __init__(self, cell, inp=16, hidden=32, layers=1, classes=10, last_only=True):
        super().__init__()
        self.rnn = cell(inp, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, classes)
        self.last_only = last_only

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.head(h[:, -1] if self.last_only else h)


def lstm(batch=16, seq_len=12):
    x = torch.randn(batch, seq_len, 16)
    return Recurrent(nn.LSTM, layers=2), ((x,), torch.randint(0, 10, (batch,))), F.cross_entropy


def _seq_ce(out, target):
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), target.reshape(-1))


def gru(batch=16, seq_len=12):
    x = torch.randn(batch, seq_len, 16)
    y = torch.randint(0, 10, (batch, seq_len))
    return Recurrent(nn.GRU, last_only=False), ((x,), y), _seq_ce


class TiedLM(nn.Module):
    def __init__(self, vocab=64, d=32, heads=4, ffn=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.1, batch_first=True)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied

    def forward(self, ids):
        return self.head(self.layer(self.tok(ids)))


def transformer(batch=4, seq_len=8):
    ids = torch.randint(0, 64, (batch, seq_len))
    return TiedLM(), ((ids,), ids.clone()), _seq_ce


class Checkpointed(nn.Module):
    def __init__(self, d=32, classes=10):
        super().__init__()
        self.stem = nn.Linear(24, d)  # so that the first checkpoint's input requires grad
        self.b1 = nn.Sequential(nn.Linear(d, 64), nn.GELU(), nn.Linear(64, d))
        self.b2 = nn.Sequential(nn.Linear(d, 64), nn.Tanh(), nn.Linear(64, d))
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = x + _checkpoint(self.b1, x, use_reentrant=True)
        x = x + _checkpoint(self.b2, x, use_reentrant=False)
        return self.head(x)


def checkpoint(batch=8):
    x = torch.randn(batch, 24)
    return Checkpointed(), ((x,), torch.randint(0, 10, (batch,))), F.cross_entropy


class InPlace(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        h = self.conv(x)
        h = h.mul(2.0).add_(1.0).relu_()  # mul allocates, the rest write in place
        g = self.conv2(h).mul_(0.5).add_(h)  # conv output updated in place
        g[:, :4] += h[:, :4]  # in-place on a view
        g.clamp_(-1.0, 1.5).relu_()
        h2 = (g * 0.5).sigmoid_()  # relu_/sigmoid_ save their results: nothing writes them after
        return self.fc(h2.mean((2, 3)))


def inplace(batch=4, image_size=16):
    x = torch.randn(batch, 3, image_size, image_size)
    return InPlace(), ((x,), torch.randint(0, 10, (batch,))), F.cross_entropy


class DictOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(24, 48), nn.ReLU())
        self.cls = nn.Linear(48, 10)
        self.rec = nn.Linear(48, 24)

    def forward(self, x):
        h = self.body(x)
        return {"logits": self.cls(h), "aux": (h.mean(1), self.rec(h))}


def _dict_loss(out, target):
    y, x = target
    return F.cross_entropy(out["logits"], y) + 0.1 * F.mse_loss(out["aux"][1], x) \
        + 0.01 * out["aux"][0].pow(2).mean()


def dict_output(batch=8):
    x = torch.randn(batch, 24)
    y = torch.randint(0, 10, (batch,))
    m = DictOut()
    return m, ((x,), (y, x)), _dict_loss


class RngStates(nn.Module):
    """Not one of the eight: its forward makes 1 MB of tensors outside any op
    (torch.get_rng_state) and drops them before the next op. Memory PyTorch holds only
    between two ops has no place in the graph, so the export must warn."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, x):
        junk = [torch.get_rng_state() for _ in range(200)]  # 200 x 5056 bytes
        del junk
        return self.lin(x)


def rng_states(batch=4):
    return RngStates(), ((torch.randn(batch, 8),), torch.randint(0, 4, (batch,))), F.cross_entropy


ALL = ["cnn_bn", "autoencoder", "lstm", "gru", "transformer", "checkpoint", "inplace",
       "dict_output"]
