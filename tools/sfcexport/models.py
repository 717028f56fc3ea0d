"""models.py — the models sfc-export knows by name besides torchvision's.

Every builder takes keyword options (batch, image_size, seq_len; each optional) and returns
(module, (inputs, target), loss_fn): model(*inputs) is the forward pass and
loss_fn(output, target) the loss. `module:callable` on the command line must follow the
same contract (see docs/exporter.md).

  unet       a U-Net (Ronneberger et al. 2015, "U-Net: Convolutional Networks for
             Biomedical Image Segmentation"): 4 down levels of two 3x3 conv + BN + ReLU,
             max-pool 2x2, transposed-conv 2x2 up-sampling, skip connections by concat,
             base width 32 (the paper's 64 quadruples the CPU export time), per-pixel
             cross-entropy over 2 classes.
  unet-plain the same U-Net without batch norm (convolutions with bias, as in the
             paper): every op from the image to the logits is one FT segment, so FT
             tiling runs the whole network tile by tile (8192 x 8192 images in 11 GiB).
  bert-base  a BERT-base-shaped encoder from torch.nn (Devlin et al. 2019): token and
             position embeddings, LayerNorm, 12 x nn.TransformerEncoderLayer(d=768,
             12 heads, ffn 3072, GELU), a masked-LM head over the 30522-token vocabulary,
             cross-entropy on every position.
  tiny-cnn, tiny-mlp, tiny-transformer   small models for the tests.
  tiny-gpt   a decoder-only LM with tied input and output embeddings (GPT-2's tying).
  tiny-lstm  an embedding, a two-layer nn.LSTM and a per-position linear layer.
  tiny-checkpoint   a CNN whose residual blocks run under torch.utils.checkpoint.
  tiny-fcn   a batch-norm-free CNN (dilated, strided, in-place ReLU, a residual add,
             max-pooling) whose spatial part the FT tiler can tile: sfc-train's tiled plans.
  tiny-updown  the same kind with transposed convolutions (a U-Net's way up, a skip).
  tiny-catup   the same kind with nearest up-sampling and a skip joined by cat.
  tiny-smooth  tiny-catup with average pooling and bilinear up-sampling.
  darknet19  DarkNet-19, the YOLO9000 classification backbone (Redmon & Farhadi 2017,
             "YOLO9000: Better, Faster, Stronger", Table 6): 18 convolutions (3x3, and
             1x1 halving the channels between them), each with batch norm and leaky
             ReLU (slope 0.1), 5 max-pools 2x2, a final 1x1 convolution to 1000
             classes, global average pooling, cross-entropy.
"""
import torch
from torch import nn


def _double_conv(cin, cout, norm=True):
    if not norm:  # the paper's block: conv + bias + ReLU
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(inplace=True))
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, in_ch=3, classes=2, width=32, depth=4, norm=True):
        super().__init__()
        chans = [width * 2 ** i for i in range(depth + 1)]
        self.down = nn.ModuleList([_double_conv(in_ch, chans[0], norm)] +
                                  [_double_conv(chans[i], chans[i + 1], norm) for i in range(depth)])
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ModuleList([nn.ConvTranspose2d(chans[i + 1], chans[i], 2, stride=2)
                                 for i in reversed(range(depth))])
        self.dec = nn.ModuleList([_double_conv(2 * chans[i], chans[i], norm)
                                  for i in reversed(range(depth))])
        self.head = nn.Conv2d(chans[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, d in enumerate(self.down):
            x = d(x if i == 0 else self.pool(x))
            skips.append(x)
        skips.pop()
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([skips.pop(), up(x)], dim=1))
        return self.head(x)


def unet(batch=4, image_size=128):
    m = UNet()
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 2, (batch, image_size, image_size))
    return m, ((x,), y), nn.functional.cross_entropy


def unet_plain(batch=4, image_size=128):
    m = UNet(norm=False)
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 2, (batch, image_size, image_size))
    return m, ((x,), y), nn.functional.cross_entropy


class Encoder(nn.Module):
    """Embeddings + nn.TransformerEncoder + a tied-free masked-LM head."""

    def __init__(self, vocab, d, heads, ffn, layers, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.1, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.norm(self.tok(ids) + self.pos(pos))
        return self.head(self.encoder(h))


def _lm_loss(logits, target):
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def bert_base(batch=2, seq_len=128):
    m = Encoder(30522, 768, 12, 3072, 12, 512)
    ids = torch.randint(0, 30522, (batch, seq_len))
    return m, ((ids,), ids.clone()), _lm_loss


def tiny_transformer(batch=4, seq_len=16):
    m = Encoder(100, 32, 4, 64, 2, 64)
    ids = torch.randint(0, 100, (batch, seq_len))
    return m, ((ids,), ids.clone()), _lm_loss


def tiny_cnn(batch=4, image_size=16):
    """Two conv layers (one with BN and in-place ReLU), max-pool, linear."""
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(), nn.Flatten(),
        nn.Linear(16 * (image_size // 4) ** 2, 10))
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 10, (batch,))
    return m, ((x,), y), nn.functional.cross_entropy


def tiny_mlp(batch=4):
    m = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    x = torch.randn(batch, 32)
    y = torch.randint(0, 10, (batch,))
    return m, ((x,), y), nn.functional.cross_entropy


class TiedLM(nn.Module):
    """A decoder-only language model whose output layer shares the token embedding's
    weight (tied weights, as GPT-2): causal self-attention blocks from torch.nn."""

    def __init__(self, vocab=100, d=32, heads=4, layers=2, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied

    def forward(self, ids):
        n = ids.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        h = self.tok(ids) + self.pos(torch.arange(n, device=ids.device))
        return self.head(self.norm(self.blocks(h, mask=mask)))


def tiny_gpt(batch=4, seq_len=16):
    m = TiedLM()
    ids = torch.randint(0, 100, (batch, seq_len + 1))
    return m, ((ids[:, :-1].contiguous(),), ids[:, 1:].contiguous()), _lm_loss


class LSTMTagger(nn.Module):
    """Embedding, a two-layer LSTM, a linear layer per position."""

    def __init__(self, vocab=100, d=32, hidden=48, classes=10):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, classes)

    def forward(self, ids):
        h, _ = self.lstm(self.emb(ids))
        return self.out(h)


def tiny_lstm(batch=4, seq_len=12):
    m = LSTMTagger()
    ids = torch.randint(0, 100, (batch, seq_len))
    y = torch.randint(0, 10, (batch, seq_len))
    return m, ((ids,), y), _lm_loss


class CheckpointedCNN(nn.Module):
    """Convolution blocks whose activations torch.utils.checkpoint recomputes in the
    backward pass (the recorded backward contains the blocks' forward ops again)."""

    def __init__(self, width=8, blocks=3, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.blocks = nn.ModuleList([nn.Sequential(
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU()) for _ in range(blocks)])
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint
        h = self.stem(x)
        for b in self.blocks:
            h = h + checkpoint(b, h, use_reentrant=False)
        return self.head(h.mean((2, 3)))


def tiny_checkpoint(batch=4, image_size=16):
    m = CheckpointedCNN()
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 10, (batch,))
    return m, ((x,), y), nn.functional.cross_entropy


def _conv_bn_leaky(cin, cout, k):
    return [nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout),
            nn.LeakyReLU(0.1, inplace=True)]


# DarkNet-19's convolutions between the poolings: (output channels, kernel) each
_DARKNET19 = [[(32, 3)], [(64, 3)], [(128, 3), (64, 1), (128, 3)], [(256, 3), (128, 1), (256, 3)],
              [(512, 3), (256, 1), (512, 3), (256, 1), (512, 3)],
              [(1024, 3), (512, 1), (1024, 3), (512, 1), (1024, 3)]]


def darknet19_module(classes=1000):
    layers, cin = [], 3
    for i, stage in enumerate(_DARKNET19):
        if i > 0:
            layers.append(nn.MaxPool2d(2))
        for cout, k in stage:
            layers += _conv_bn_leaky(cin, cout, k)
            cin = cout
    layers += [nn.Conv2d(cin, classes, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(*layers)


def darknet19(batch=2, image_size=224):
    m = darknet19_module()
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 1000, (batch,))
    return m, ((x,), y), nn.functional.cross_entropy


def tiny_fcn(batch=2, image_size=32):
    """A batch-norm-free convolutional net whose spatial part tiles (sfc-train's tiled
    plans): 3x3 convolutions with ReLU (one dilated, one strided, an in-place ReLU), a
    residual add, max-pooling 2x2, then global pooling and a linear classifier."""
    torch.manual_seed(0)

    class FCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = nn.Conv2d(8, 8, 3, padding=2, dilation=2)
            self.pool = nn.MaxPool2d(2)
            self.c3 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.head = nn.Linear(16, 10)

        def forward(self, x):
            a = torch.relu(self.c1(x))
            b = torch.relu(self.c2(a)) + a
            c = nn.functional.relu(self.c3(self.pool(b)), inplace=True)
            return self.head(nn.functional.adaptive_avg_pool2d(c, 1).flatten(1))

    m = FCN()
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 10, (batch,))
    return m, ((x,), y), nn.functional.cross_entropy


def tiny_updown(batch=2, image_size=32):
    """tiny-fcn's kind with a U-Net's way up: 3x3 convolution and ReLU, max-pooling, a
    3x3 convolution, a transposed convolution (kernel 2, stride 2) back to full size, a
    skip added, a 3x3 transposed convolution (stride 1, padding 1), global pooling and a
    linear classifier; no batch norm, so its spatial part tiles."""

    class UpDown(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = nn.Conv2d(8, 8, 3, padding=1)
            self.up = nn.ConvTranspose2d(8, 8, 2, stride=2)
            self.c3 = nn.ConvTranspose2d(8, 8, 3, padding=1)
            self.head = nn.Linear(8, 10)

        def forward(self, x):
            a = torch.relu(self.c1(x))
            b = torch.relu(self.c2(nn.functional.max_pool2d(a, 2)))
            c = torch.relu(self.c3(torch.relu(self.up(b)) + a))
            return self.head(nn.functional.adaptive_avg_pool2d(c, 1).flatten(1))

    m = UpDown()
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 10, (batch,))
    return m, ((x,), y), nn.functional.cross_entropy


def tiny_catup(batch=2, image_size=32, smooth=False):
    """A U-Net's skip by concatenation with nearest up-sampling, no batch norm: 3x3
    convolution and ReLU, max-pooling, a 3x3 convolution, nearest up-sampling x2, cat
    with the skip, a 3x3 convolution, global pooling and a linear classifier. smooth:
    average pooling (3x3, stride 2, padding 1) and bilinear up-sampling instead."""

    class CatUp(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = nn.Conv2d(8, 8, 3, padding=1)
            self.c3 = nn.Conv2d(16, 8, 3, padding=1)
            self.head = nn.Linear(8, 10)

        def forward(self, x):
            a = torch.relu(self.c1(x))
            if smooth:
                p = nn.functional.avg_pool2d(a, 3, stride=2, padding=1)
            else:
                p = nn.functional.max_pool2d(a, 2)
            b = torch.relu(self.c2(p))
            u = nn.functional.interpolate(b, scale_factor=2, mode="bilinear",
                                          align_corners=False) if smooth else \
                nn.functional.interpolate(b, scale_factor=2, mode="nearest")
            c = torch.relu(self.c3(torch.cat([a, u], dim=1)))
            return self.head(nn.functional.adaptive_avg_pool2d(c, 1).flatten(1))

    m = CatUp()
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 10, (batch,))
    return m, ((x,), y), nn.functional.cross_entropy


def tiny_smooth(batch=2, image_size=32):
    """tiny-catup with average pooling and bilinear up-sampling."""
    return tiny_catup(batch, image_size, smooth=True)


def resnet50_gn(batch=2, image_size=224):
    """torchvision's ResNet-50 with group normalisation (32 groups) in place of batch norm
    (Wu and He, "Group Normalization", 2018): each sample normalised on its own, so a
    batch trained whole and the same batch trained as micro-batches with gradients
    accumulated compute the same thing up to rounding (sfc-train --reference
    accumulate:K; tools/gpu-check's out-of-core run)."""
    import torchvision
    m = torchvision.models.resnet50(weights=None,
                                    norm_layer=lambda c: nn.GroupNorm(32, c))
    x = torch.randn(batch, 3, image_size, image_size)
    y = torch.randint(0, 1000, (batch,))
    return m, ((x,), y), lambda out, t: nn.functional.cross_entropy(out, t)


BUILTIN = {"unet": unet, "unet-plain": unet_plain, "bert-base": bert_base, "tiny-cnn": tiny_cnn, "tiny-mlp": tiny_mlp,
           "tiny-transformer": tiny_transformer, "tiny-gpt": tiny_gpt, "tiny-lstm": tiny_lstm,
           "tiny-checkpoint": tiny_checkpoint, "darknet19": darknet19, "tiny-fcn": tiny_fcn,
           "tiny-updown": tiny_updown, "tiny-catup": tiny_catup, "tiny-smooth": tiny_smooth,
           "resnet50-gn": resnet50_gn}
