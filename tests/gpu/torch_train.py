#!/usr/bin/env python3
"""The reference CNNs of suites/models trained in PyTorch eager mode on the
GPU, for the device check's ratio against dlbench's cuda backend.

The step is what a dlbench training step is: a batch of uint8 images on the
host is normalised, copied to the device, and run forward and backward with
SGD (lr 0.01, momentum 0.9); the figure is samples/s over timed steps after
a warm-up, the device synchronised at the end. Precision: fp32, or bf16 /
fp16 autocast (fp16 with a GradScaler), as the amp plugin runs them.

Prints one JSON object per line:
  {"model": "lenet", "batch": 256, "precision": "fp32", "samples_per_s": ...}
Usage: torch_train.py [--models lenet,vgg-small] [--batches 256,1024]
                      [--precisions fp32,bf16,fp16] [--seconds 2]
"""
import argparse
import json
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("torch_train.py: PyTorch is not installed", file=sys.stderr)
    sys.exit(77)


class LeNet(nn.Module):
    """suites/models/lenet.ini: PyTorch's MNIST example of 2017-2019."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, 5)
        self.conv2 = nn.Conv2d(10, 20, 5)
        self.drop2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.drop2(self.conv2(x)), 2))
        x = F.dropout(F.relu(self.fc1(x.flatten(1))), 0.5, self.training)
        return F.log_softmax(self.fc2(x), dim=1)


def vgg_small():
    """suites/models/vgg-small.ini."""
    layers, c = [], 1
    for out, pool in ((32, True), (64, False), (64, True), (128, False), (128, False)):
        layers += [nn.Conv2d(c, out, 3, padding=1, bias=False),
                   nn.BatchNorm2d(out), nn.ReLU()]
        if pool:
            layers.append(nn.MaxPool2d(2))
        c = out
    layers += [nn.AvgPool2d(7), nn.Flatten(), nn.Linear(128, 10),
               nn.LogSoftmax(dim=1)]
    return nn.Sequential(*layers)


def measure(model_name, batch, precision, seconds):
    dev = torch.device("cuda")
    torch.manual_seed(42)
    model = (LeNet() if model_name == "lenet" else vgg_small()).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")
    images = torch.randint(0, 256, (batch, 1, 28, 28), dtype=torch.uint8)
    labels = torch.randint(0, 10, (batch,))

    def step():
        x = ((images.float() / 255.0 - 0.2860) / 0.3530).to(dev)
        y = labels.to(dev)
        with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            loss = F.nll_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    t_end = time.perf_counter() + min(1.0, seconds / 2)
    while time.perf_counter() < t_end:  # warm-up: cuDNN and allocator caches
        step()
    torch.cuda.synchronize()
    steps, t0 = 0, time.perf_counter()
    while True:
        step()
        steps += 1
        if steps % 10 == 0:
            torch.cuda.synchronize()
            if time.perf_counter() - t0 >= seconds:
                break
    elapsed = time.perf_counter() - t0
    return steps * batch / elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="lenet,vgg-small")
    ap.add_argument("--batches", default="256,1024")
    ap.add_argument("--precisions", default="fp32,bf16,fp16")
    ap.add_argument("--seconds", type=float, default=2.0)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_train.py: no CUDA device", file=sys.stderr)
        return 77
    torch.backends.cudnn.benchmark = True  # PyTorch's fastest eager setting
    for m in a.models.split(","):
        for b in a.batches.split(","):
            for p in a.precisions.split(","):
                sps = measure(m, int(b), p, a.seconds)
                print(json.dumps({"model": m, "batch": int(b), "precision": p,
                                  "samples_per_s": round(sps, 1),
                                  "torch": torch.__version__}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
