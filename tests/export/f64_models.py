"""f64_models.py — the tiled-training test models in float64 (`f64_models:fcn` on the
sfc-export / sfc-train command line, with tests/export on PYTHONPATH): a tiled plan sums
a convolution's weight gradient in another order than the whole op, so in float32 it
differs from eager PyTorch by rounding (1e-6 to 2e-4 relative, more where a gradient
cancels); in float64 the same plans agree to about 1e-14, which separates rounding from
a wrong box (tests/export/test_train.py tiled)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tools"))
from sfcexport import exporter, models  # noqa: E402


def _f64(builder, batch, image_size):
    m, (inp, y), loss = builder(batch=batch, image_size=image_size)
    if y is not None and y.is_floating_point():
        y = y.double()
    return m.double(), (tuple(x.double() for x in inp), y), loss


def fcn(batch=2, image_size=32):
    return _f64(models.tiny_fcn, batch, image_size)


def updown(batch=2, image_size=32):
    return _f64(models.tiny_updown, batch, image_size)


def catup(batch=2, image_size=32):
    return _f64(models.tiny_catup, batch, image_size)


def smooth(batch=2, image_size=32):
    return _f64(models.tiny_smooth, batch, image_size)


def unet(batch=1, image_size=64):
    """The bundled U-Net (batch norm, transposed-convolution up-sampling, skips joined by
    cat) in float64."""
    def build(batch, image_size):
        m, ex, loss = exporter.resolve("unet", image_size)(batch)
        return m, ex, loss
    return _f64(build, batch, image_size)


def unet_plain(batch=1, image_size=64):
    """The bundled U-Net without batch norm (plans/unet-plain: the paper's blocks) in
    float64: the whole network, image to logits, is one FT segment."""
    return _f64(models.unet_plain, batch, image_size)


def resnet50_gn(batch=2, image_size=64):
    """ResNet-50 with group normalisation (models.resnet50_gn) in float64: the model of
    tools/gpu-check's out-of-core run against accumulated micro-batches."""
    return _f64(models.resnet50_gn, batch, image_size)
