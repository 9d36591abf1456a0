#!/usr/bin/env python3
"""Writes the reference networks of suites/models/ as dlbench network files.

    python3 suites/models/make-models.py [OUTDIR]    (default: beside this file)

The layers follow torchvision's definitions (models/resnet.py,
models/mobilenetv2.py): convolutions without bias before batch norm, the
stride of a ResNet bottleneck on its 3x3 convolution (v1.5), MobileNetV2's
inverted residuals with ReLU6 and width rounded to multiples of 8. The
parameter counts equal torchvision's (tests/unit/test_model_zoo.c checks
them: ResNet-50 25,557,032 at 1,000 classes). resnet20, resnet8 and
mobilenet-v2-32 are the CIFAR-style forms at 32x32 for Fashion-MNIST padded to 32x32
(1 channel, 10 classes): resnet20 as in He et al. 2016, section 4.2, with
1x1 projection shortcuts (option B) where the shape changes;
mobilenet-v2-32 at width 0.5 with the stem's and the second stage's
strides 1, as CIFAR ports of MobileNetV2 do. Python 3 only, no packages.
"""
import os
import sys


class Net:
    def __init__(self, name, header):
        self.lines = ["; " + h for h in header] + [""]
        self.names = set()
        self.last = "net"

    def net(self, input_shape, classes, loss="cross_entropy"):
        self.lines += ["[net]", f"input = {input_shape}", f"classes = {classes}",
                       f"loss = {loss}", ""]

    def layer(self, name, kind, inputs=None, **keys):
        assert name not in self.names, name
        self.names.add(name)
        self.lines.append(f"[{name}]")
        self.lines.append(f"type = {kind}")
        for k, v in keys.items():
            self.lines.append(f"{k} = {v}")
        if inputs is not None:
            src = ", ".join(inputs) if isinstance(inputs, list) else inputs
            if src != self.last:
                self.lines.append(f"input = {src}")
        self.lines.append("")
        self.last = name
        return name

    def conv_bn(self, name, src, filters, size, stride=1, groups=1, act="relu"):
        """conv (no bias), batchnorm, then relu/relu6/none; returns the last."""
        keys = {"filters": filters, "size": size}
        if stride != 1:
            keys["stride"] = stride
        if size // 2:
            keys["pad"] = size // 2
        if groups != 1:
            keys["groups"] = groups
        keys["bias"] = 0
        self.layer(name, "conv", src, **keys)
        out = self.layer(name + "_bn", "batchnorm")
        if act == "relu":
            out = self.layer(name + "_relu", "relu")
        elif act == "relu6":
            out = self.layer(name + "_relu", "relu", max=6)
        return out

    def head(self, classes, dropout=None):
        self.layer("avgpool", "global_avgpool")
        self.layer("flatten", "flatten")
        if dropout:
            self.layer("dropout", "dropout", p=dropout)
        self.layer("fc", "linear", out=classes)

    def write(self, path):
        with open(path, "w") as f:
            f.write("\n".join(self.lines).rstrip("\n") + "\n")


def basic_block(n, name, src, cin, cout, stride):
    a = n.conv_bn(name + "_conv1", src, cout, 3, stride)
    b = n.conv_bn(name + "_conv2", a, cout, 3, act=None)
    skip = src
    if stride != 1 or cin != cout:
        skip = n.conv_bn(name + "_down", src, cout, 1, stride, act=None)
    n.layer(name + "_add", "add", [b, skip])
    return n.layer(name + "_relu", "relu")


def bottleneck(n, name, src, cin, width, stride):
    cout = width * 4
    a = n.conv_bn(name + "_conv1", src, width, 1)
    b = n.conv_bn(name + "_conv2", a, width, 3, stride)  # v1.5: stride here
    c = n.conv_bn(name + "_conv3", b, cout, 1, act=None)
    skip = src
    if stride != 1 or cin != cout:
        skip = n.conv_bn(name + "_down", src, cout, 1, stride, act=None)
    n.layer(name + "_add", "add", [c, skip])
    return n.layer(name + "_relu", "relu")


def resnet_imagenet(name, block, counts, header):
    n = Net(name, header)
    n.net("3x224x224", 1000)
    x = n.conv_bn("conv1", "net", 64, 7, 2)
    x = n.layer("maxpool", "maxpool", x, size=3, stride=2, pad=1)
    cin = 64
    for stage, (count, width) in enumerate(zip(counts, (64, 128, 256, 512))):
        for i in range(count):
            stride = 2 if stage > 0 and i == 0 else 1
            bname = f"layer{stage + 1}_{i}"
            if block == "basic":
                x = basic_block(n, bname, x, cin, width, stride)
                cin = width
            else:
                x = bottleneck(n, bname, x, cin, width, stride)
                cin = width * 4
    n.head(1000)
    return n


def resnet_cifar(name, blocks, header):
    """He et al.'s CIFAR ResNet of 6 blocks + 2 layers."""
    n = Net(name, header)
    n.net("1x32x32", 10)
    x = n.conv_bn("conv1", "net", 16, 3)
    cin = 16
    for stage, width in enumerate((16, 32, 64)):
        for i in range(blocks):
            stride = 2 if stage > 0 and i == 0 else 1
            x = basic_block(n, f"layer{stage + 1}_{i}", x, cin, width, stride)
            cin = width
    n.head(10)
    return n


def resnet20():
    return resnet_cifar("resnet20", 3, [
        "ResNet-20 for 32x32 images (He et al. 2016, section 4.2): a 3x3 stem",
        "at 16 channels, three stages of three basic blocks at 16, 32, 64",
        "channels (stride 2 entering stages 2 and 3, with 1x1 projection",
        "shortcuts there: option B), global average pool, linear. Fashion-MNIST",
        "padded to 1x32x32, 10 classes. Written by make-models.py."])


def resnet8():
    return resnet_cifar("resnet8", 1, [
        "ResNet-8: ResNet-20 with one basic block per stage (He et al. 2016,",
        "section 4.2, n = 1), a student for knowledge distillation from",
        "resnet20 (suites/distill.ini). Fashion-MNIST padded to 1x32x32, 10",
        "classes. Written by make-models.py."])


def divisible(v, d=8):
    r = max(d, int(v + d / 2) // d * d)
    return r + d if r < 0.9 * v else r


def mobilenet_v2(name, header, input_shape, classes, width, strides):
    n = Net(name, header)
    n.net(input_shape, classes)
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    cin = divisible(32 * width)
    last = divisible(1280 * max(1.0, width))
    x = n.conv_bn("features0", "net", cin, 3, strides[0], act="relu6")
    k = 1
    for stage, (t, c, count, s) in enumerate(settings):
        cout = divisible(c * width)
        if stage + 1 < len(strides):
            s = strides[stage + 1] if strides[stage + 1] is not None else s
        for i in range(count):
            stride = s if i == 0 else 1
            bname = f"features{k}"
            hidden = int(round(cin * t))
            src = x
            y = x
            if t != 1:
                y = n.conv_bn(bname + "_expand", y, hidden, 1, act="relu6")
            y = n.conv_bn(bname + "_dw", y, hidden, 3, stride, groups=hidden,
                          act="relu6")
            y = n.conv_bn(bname + "_project", y, cout, 1, act=None)
            if stride == 1 and cin == cout:
                y = n.layer(bname + "_add", "add", [y, src])
            x = y
            cin = cout
            k += 1
    n.conv_bn(f"features{k}", x, last, 1, act="relu6")
    n.head(classes, dropout=0.2)
    return n


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    nets = {
        "resnet50": resnet_imagenet("resnet50", "bottleneck", (3, 4, 6, 3), [
            "ResNet-50 v1.5 as torchvision's resnet50 and MLPerf's reference:",
            "the stride of each first bottleneck on its 3x3 convolution; 3x224x224,",
            "1,000 classes, 25,557,032 parameters, 4.09 GMAC forward per image.",
            "Without images of that size the data are synthetic, and every",
            "result says so. Written by make-models.py."]),
        "resnet18": resnet_imagenet("resnet18", "basic", (2, 2, 2, 2), [
            "ResNet-18 as torchvision's resnet18: 3x224x224, 1,000 classes,",
            "11,689,512 parameters, 1.81 GMAC forward per image. Written by",
            "make-models.py."]),
        "mobilenet-v2": mobilenet_v2("mobilenet-v2", [
            "MobileNetV2 as torchvision's mobilenet_v2 (width 1.0): inverted",
            "residuals with depthwise 3x3 convolutions and ReLU6; 3x224x224,",
            "1,000 classes, 3,504,872 parameters, 0.30 GMAC forward per image.",
            "Written by make-models.py."], "3x224x224", 1000, 1.0, [2]),
        "resnet20": resnet20(),
        "resnet8": resnet8(),
        "mobilenet-v2-32": mobilenet_v2("mobilenet-v2-32", [
            "A narrow MobileNetV2 for 32x32 images: width 0.5, the stem and the",
            "second stage at stride 1 (as CIFAR ports do), the rest as",
            "torchvision's. Fashion-MNIST padded to 1x32x32, 10 classes.",
            "Written by make-models.py."], "1x32x32", 10, 0.5, [1, None, 1]),
    }
    for name, net in nets.items():
        net.write(os.path.join(out, name + ".ini"))


if __name__ == "__main__":
    main()
