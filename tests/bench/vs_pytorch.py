#!/usr/bin/env python3
"""The PyTorch side of tests/bench/vs-pytorch.sh (see there for the whole
benchmark), and the table it prints.

  vs_pytorch.py check   --model FILE.ini --batch N
      build the PyTorch network from a dlbench model file, run one forward
      pass, and print as JSON its parameter count, its forward FLOPs counted
      by dlbench's rules on the shapes PyTorch produced, and the output shape
  vs_pytorch.py measure --model FILE.ini --mode train|infer --batch N ...
      time training or inference steps, eager and optionally torch.compile,
      and write the figures as JSON
  vs_pytorch.py measure --model FILE.ini --torchvision NAME ...
      the same with torchvision's definition of a reference network
      (resnet50, resnet18, mobilenet_v2) in place of the file's layers: the
      file's [net] section gives the input, classes and loss, and the check
      is that both sides count the same parameters
  vs_pytorch.py report  DIR
      read a run directory of vs-pytorch.sh and print the table

The network is read from the same model file dlbench reads, with the rules
of core/model/model_file.c: the same layer types, keys, defaults and
shapes, so that the two sides train exactly the same network. A graph
(residual adds, concatenations, grouped convolutions) is not rebuilt from
the file here: for the shipped reference networks PyTorch runs
torchvision's own definition, as its users would, and the parameter counts
of the two must agree. Anything the
file holds that is not understood here is refused rather than guessed at.
Only the standard library is needed until torch is imported (measure and
check), so `report` runs without PyTorch.
"""

import argparse
import collections
import json
import math
import os
import resource
import statistics
import sys
import time
import traceback

# ---------------------------------------------------------------------------
# The model file, read as dlbench reads it (core/util/ini_lines.c pins inih to:
# ';' and '#' start a comment at the beginning of a line or, after
# whitespace, inside one; KEY = VALUE or KEY : VALUE; no multi-line values).

# Per layer type: key -> (kind, default); a default of None means required.
# Ranges as model_file.c checks them, so a file dlbench refuses is refused.
LAYER_KEYS = {
    "conv": {"filters": ("uint", None, 1, 65536), "size": ("uint", None, 1, 1024),
             "stride": ("uint", "1", 1, 1024), "pad": ("uint", "0", 0, 1024),
             "bias": ("bool", "1", 0, 1)},
    "maxpool": {"size": ("uint", None, 1, 1024), "stride": ("uint", None, 1, 1024),
                "pad": ("uint", "0", 0, 1024)},
    "avgpool": {"size": ("uint", None, 1, 1024), "stride": ("uint", None, 1, 1024),
                "pad": ("uint", "0", 0, 1024)},
    "relu": {},
    "dropout": {"p": ("float", "0.5", 0, 0.999), "mode": ("mode", "element", 0, 0)},
    "batchnorm": {"eps": ("float", "1e-5", 1e-12, 1), "momentum": ("float", "0.1", 0, 1)},
    "linear": {"out": ("uint", None, 1, 1 << 24), "bias": ("bool", "1", 0, 1)},
    "flatten": {},
    "logsoftmax": {},
}


class ModelFileError(Exception):
    pass


def strip_inline_comment(text):
    """inih's inline comments: ';' or '#' preceded by whitespace."""
    for i, ch in enumerate(text):
        if ch in ";#" and i > 0 and text[i - 1] in " \t":
            return text[:i]
    return text


def read_sections(path):
    """[(name, line, {key: (value, line)})] in file order."""
    sections = []
    with open(path, encoding="utf-8-sig") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line[0] in ";#":
                continue
            if line.startswith("["):
                end = line.find("]")
                if end < 0:
                    raise ModelFileError(f"{path}:{lineno}: malformed section header")
                sections.append((line[1:end].strip(), lineno, {}))
                continue
            cut = [i for i in (line.find("="), line.find(":")) if i >= 0]
            if not cut or not sections:
                raise ModelFileError(f"{path}:{lineno}: expected KEY = VALUE in a section")
            key = line[:min(cut)].strip()
            value = strip_inline_comment(line[min(cut) + 1:]).strip()
            keys = sections[-1][2]
            if key in keys:
                raise ModelFileError(f"{path}:{lineno}: key '{key}' is set twice")
            keys[key] = (value, lineno)
    return sections


def typed(path, layer, key, kind, text, lo, hi):
    where = f"{path}: layer '{layer}': {key} = '{text}'"
    if kind == "bool":
        if text not in ("0", "1"):
            raise ModelFileError(f"{where}; expected 0 or 1")
        return text == "1"
    if kind == "mode":
        if text not in ("element", "channel"):
            raise ModelFileError(f"{where}; expected element or channel")
        return text
    try:
        x = float(text)
    except ValueError:
        raise ModelFileError(f"{where}; expected a number") from None
    if not math.isfinite(x) or not lo <= x <= hi or (kind == "uint" and x != int(x)):
        raise ModelFileError(f"{where}; expected a value from {lo} to {hi}")
    return int(x) if kind == "uint" else x


def out_size(n, k, stride, pad):
    """dlb_conv_out_size: floor((n + 2 pad - k) / stride) + 1, as PyTorch's
    convolution and pooling with ceil_mode off."""
    return (n + 2 * pad - k) // stride + 1


def parse_net(path):
    """The [net] section alone, for a network PyTorch takes from
    torchvision: input shape, classes and loss."""
    sections = read_sections(path)
    if not sections or sections[0][0] != "net":
        raise ModelFileError(f"{path}: the first section must be [net]")
    net = sections[0][2]
    try:
        shape = tuple(int(v) for v in net["input"][0].split("x"))
        classes = int(net["classes"][0])
    except (KeyError, ValueError):
        raise ModelFileError(f"{path}: [net] needs input = CxHxW and classes = N") from None
    loss = net.get("loss", ("nll", 0))[0]
    if loss not in ("nll", "cross_entropy"):
        raise ModelFileError(f"{path}: [net]: loss = '{loss}' is not known here")
    return {"path": path, "input": shape, "classes": classes, "loss": loss,
            "layers": None}


def parse_model(path):
    """The [net] section and the layers, each with its keys resolved
    (defaults applied) and the shapes dlbench infers for it."""
    sections = read_sections(path)
    if not sections or sections[0][0] != "net":
        raise ModelFileError(f"{path}: the first section must be [net]")
    net = sections[0][2]
    unknown = set(net) - {"input", "classes", "loss"}
    if unknown:
        raise ModelFileError(f"{path}: [net] has no key '{sorted(unknown)[0]}'")
    try:
        c, h, w = (int(v) for v in net["input"][0].split("x"))
        classes = int(net["classes"][0])
    except (KeyError, ValueError):
        raise ModelFileError(f"{path}: [net] needs input = CxHxW and classes = N") from None
    loss = net.get("loss", ("nll", 0))[0]
    if loss != "nll":
        # dlbench has no other loss; a new one needs its PyTorch twin here.
        raise ModelFileError(f"{path}: [net]: loss = '{loss}' is not known here")
    layers, flat = [], False
    for name, lineno, keys in sections[1:]:
        if "type" not in keys:
            raise ModelFileError(f"{path}:{lineno}: layer '{name}' has no type")
        kind = keys["type"][0]
        if kind not in LAYER_KEYS:
            # A layer type dlbench gained after this script: refuse, never guess.
            raise ModelFileError(f"{path}:{lineno}: layer '{name}': type '{kind}' "
                                 "is not known to vs_pytorch.py")
        defs = LAYER_KEYS[kind]
        extra = set(keys) - set(defs) - {"type"}
        if extra:
            raise ModelFileError(f"{path}: layer '{name}': {kind} has no key "
                                 f"'{sorted(extra)[0]}'")
        L = {"name": name, "type": kind, "in": (c, h, w), "flat_in": flat}
        for key, (k, default, lo, hi) in defs.items():
            if key in keys:
                L[key] = typed(path, name, key, k, keys[key][0], lo, hi)
            elif default is not None:
                L[key] = typed(path, name, key, k, default, lo, hi)
            elif key == "stride":
                L[key] = L["size"]  # pooling: non-overlapping windows by default
            else:
                raise ModelFileError(f"{path}: layer '{name}': {kind} needs '{key}'")
        if kind in ("conv", "maxpool", "avgpool") or (
                kind == "dropout" and L["mode"] == "channel"):
            if flat:
                raise ModelFileError(f"{path}: layer '{name}': {kind} needs a "
                                     "c x h x w input, not a flat one")
        if kind in ("conv", "maxpool", "avgpool"):
            if kind != "conv" and L["pad"] >= L["size"]:
                raise ModelFileError(f"{path}: layer '{name}': pad must be "
                                     "smaller than the window")
            if L["size"] > min(h, w) + 2 * L["pad"]:
                raise ModelFileError(f"{path}: layer '{name}': window larger "
                                     "than the padded input")
            h, w = (out_size(h, L["size"], L["stride"], L["pad"]),
                    out_size(w, L["size"], L["stride"], L["pad"]))
            if kind == "conv":
                c = L["filters"]
        elif kind == "linear":
            if not flat:
                raise ModelFileError(f"{path}: layer '{name}': linear needs a flatten before it")
            c = L["out"]
        elif kind == "flatten":
            c, h, w, flat = c * h * w, 1, 1, True
        L["out_shape"] = (c,) if flat else (c, h, w)
        layers.append(L)
    if not layers or layers[-1]["type"] != "logsoftmax":
        raise ModelFileError(f"{path}: loss = nll needs a logsoftmax as the last layer")
    if layers[-1]["out_shape"] != (classes,):
        raise ModelFileError(f"{path}: the network gives {layers[-1]['out_shape']} "
                             f"but [net] has classes = {classes}")
    return {"path": path, "input": tuple(int(v) for v in net["input"][0].split("x")),
            "classes": classes, "loss": loss, "layers": layers}


# ---------------------------------------------------------------------------
# The PyTorch network. Imports of torch stay inside the functions that need
# it, so that `report` needs the standard library only.

def build(spec):
    """nn.Sequential whose modules carry the model file's section names."""
    import torch
    from torch import nn
    import torch.nn.functional as F

    class LogSoftmax(nn.Module):
        """Log-softmax over the classes, always in fp32: dlbench's amp keeps
        the loss (log-softmax + NLL) in fp32 when it trains in bf16, and
        hands inference outputs back as fp32. On fp32 data the cast is a
        no-op; on 10 classes it costs nothing measurable either way."""

        def forward(self, x):
            return F.log_softmax(x, dim=1, dtype=torch.float32)

    mods = collections.OrderedDict()
    for L in spec["layers"]:
        c = L["in"][0]  # channels, or features after a flatten
        t = L["type"]
        if t == "conv":
            m = nn.Conv2d(c, L["filters"], L["size"], stride=L["stride"],
                          padding=L["pad"], bias=L["bias"])
        elif t == "maxpool":
            # dlbench pads max pooling with -infinity, as PyTorch does.
            m = nn.MaxPool2d(L["size"], stride=L["stride"], padding=L["pad"])
        elif t == "avgpool":
            # dlbench divides by the whole window, padding included:
            # PyTorch's count_include_pad=True (its default).
            m = nn.AvgPool2d(L["size"], stride=L["stride"], padding=L["pad"],
                             count_include_pad=True)
        elif t == "relu":
            m = nn.ReLU()
        elif t == "dropout":
            # channel mode zeroes whole feature maps: dropout2d.
            m = nn.Dropout2d(L["p"]) if L["mode"] == "channel" else nn.Dropout(L["p"])
        elif t == "batchnorm":
            # dlbench normalises x[n][c][hw] per channel; a flat input is
            # c features with hw = 1, PyTorch's BatchNorm1d.
            bn = nn.BatchNorm1d if L["flat_in"] else nn.BatchNorm2d
            m = bn(c, eps=L["eps"], momentum=L["momentum"])
        elif t == "linear":
            m = nn.Linear(c, L["out"], bias=L["bias"])
        elif t == "flatten":
            m = nn.Flatten()
        elif t == "logsoftmax":
            m = LogSoftmax()
        else:  # parse_model refused it already
            raise ModelFileError(f"layer type {t}")
        mods[L["name"]] = m
    return nn.Sequential(mods)


def build_torchvision(name, spec):
    """torchvision's network NAME with random weights and the file's class
    count. Its first layer must take the file's input shape: checked by
    the forward pass of check_torchvision."""
    import torchvision
    if not hasattr(torchvision.models, name):
        raise ModelFileError(f"torchvision has no network '{name}'")
    return getattr(torchvision.models, name)(weights=None, num_classes=spec["classes"])


def check_torchvision(spec, model, batch):
    """One forward pass in inference mode: the output shape, the parameter
    count (which the report compares with dlbench's) and the MACs of the
    convolutions and linear layers (the figure torchvision's model cards
    give, 4.09 G for ResNet-50)."""
    import torch
    from torch import nn
    macs = [0]

    def count(mod, inp, out):
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1]
            macs[0] += out.numel() * (mod.in_channels // mod.groups) * k
        elif isinstance(mod, nn.Linear):
            macs[0] += out.numel() * mod.in_features
    hooks = [m.register_forward_hook(count) for m in model.modules()
             if isinstance(m, (nn.Conv2d, nn.Linear))]
    model.eval()
    with torch.no_grad():
        out = model(torch.randn((batch,) + spec["input"]))
    model.train()
    for h in hooks:
        h.remove()
    problems = []
    if tuple(out.shape) != (batch, spec["classes"]):
        problems.append(f"output {list(out.shape)}, expected [{batch}, {spec['classes']}]")
    return {"model": spec["path"], "params": sum(p.numel() for p in model.parameters()),
            "flops_fwd": None, "macs_fwd": macs[0] // batch,
            "output_shape": list(out.shape), "layers": [], "problems": problems}


def flops_fwd(L, out_shape):
    """Forward FLOPs of one image through layer L by dlbench's counting
    (model_file.c, infer_layer), on the output shape PyTorch produced: a
    shape that differs from dlbench's shows up as a different total."""
    ins = math.prod(L["in"])
    outs = math.prod(out_shape)
    t = L["type"]
    if t == "conv":
        return 2 * outs * L["in"][0] * L["size"] ** 2
    if t in ("maxpool", "avgpool"):
        return outs * L["size"] ** 2
    if t in ("relu", "dropout"):
        return ins
    if t == "batchnorm":
        return 4 * ins
    if t == "linear":
        return 2 * outs * L["in"][0]
    if t == "logsoftmax":
        return 3 * ins
    return 0  # flatten


def check(spec, model, batch):
    """One forward pass: per layer, PyTorch's output shape against
    dlbench's; the output must be [batch, classes]. In inference mode, so
    that the batch-norm statistics stay untouched and a batch of 1 passes
    a batch norm of flat features."""
    import torch
    shapes = {}
    hooks = [m.register_forward_hook(
        lambda mod, inp, out, name=name: shapes.__setitem__(name, tuple(out.shape[1:])))
        for name, m in model.named_children()]
    model.eval()
    with torch.no_grad():
        out = model(torch.randn((batch,) + spec["input"]))
    model.train()
    for h in hooks:
        h.remove()
    problems, flops = [], 0
    for L in spec["layers"]:
        got = shapes[L["name"]]
        if got != tuple(L["out_shape"]):
            problems.append(f"layer {L['name']}: PyTorch gives {list(got)}, "
                            f"dlbench's rules {list(L['out_shape'])}")
        flops += flops_fwd(L, got)
    if tuple(out.shape) != (batch, spec["classes"]):
        problems.append(f"output {list(out.shape)}, expected [{batch}, {spec['classes']}]")
    return {"model": spec["path"], "params": sum(p.numel() for p in model.parameters()),
            "flops_fwd": flops, "output_shape": list(out.shape),
            "layers": [[L["name"], L["type"], list(shapes[L["name"]])]
                       for L in spec["layers"]],
            "problems": problems}


# ---------------------------------------------------------------------------
# Measuring. Like dlbench: a warm-up, then one sample per step, timed with a
# monotonic clock, until the time cap and at least min_samples; the figure
# is the median step time. (dlbench also stops early once the median's 95%
# interval is within 1%: fewer samples, the same quantity estimated.)

def time_steps(step, warmup_s, cap_s, min_samples, warmup_steps=5):
    clock = time.perf_counter
    t = clock()
    step()  # the first call of a compiled model compiles: never a sample
    first = clock() - t
    t0, n = clock(), 0
    while n < warmup_steps or clock() - t0 < warmup_s:
        step()
        n += 1
    # Preemptions of any of the process's threads while sampling: as
    # dlbench's record, 100 a second or more means something else ran.
    switches = resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw
    samples, t1 = [], clock()
    while len(samples) < min_samples or clock() - t1 < cap_s:
        s = clock()
        step()
        samples.append(clock() - s)
    per_s = (resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw - switches) / (clock() - t1)
    r = {"median_s": statistics.median(samples), "n": len(samples),
         "min_s": min(samples), "max_s": max(samples),
         "first_step_s": first, "warmup_steps": n + 1, "involuntary_per_s": per_s}
    if per_s >= 100:
        r["doubtful"] = f"its threads were preempted {per_s:.0f} times a second"
    return r


def synthetic_train_set(spec, seed):
    """Bytes and labels of the same size as dlbench's synthetic training set
    (60,000 images, at most 256 MiB: 1,783 at 3x224x224). Their values do
    not change the work of a step."""
    import torch
    n = max(1, min(60000, (256 << 20) // math.prod(spec["input"])))
    g = torch.Generator().manual_seed(seed)
    images = torch.randint(0, 256, (n,) + spec["input"], dtype=torch.uint8, generator=g)
    labels = torch.randint(0, spec["classes"], (n,), generator=g)
    sample = images[:1024].float() / 255
    return images, labels, float(sample.mean()), float(sample.std()), g


def train_step_fn(model, spec, args):
    """One training step as dlbench's (core/train/trainer.c): the next
    batch of a shuffled epoch, gathered from the bytes and normalised (the
    work of dlbench's baseline loader, which is inside its step too), then
    forward, the file's loss (NLL after its log-softmax, or cross-entropy
    on the logits), backward and SGD with momentum. bf16: autocast, as
    dlbench's amp runs the matrix products in bf16 with fp32 master weights
    and no loss scaling."""
    import torch
    import torch.nn.functional as F
    images, labels, mean, std, g = synthetic_train_set(spec, args.seed)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    state = {"order": torch.randperm(len(images), generator=g), "pos": 0}
    b = args.batch
    loss_fn = F.cross_entropy if spec["loss"] == "cross_entropy" else F.nll_loss

    def step():
        if state["pos"] + b > len(images):
            state["order"], state["pos"] = torch.randperm(len(images), generator=g), 0
        idx = state["order"][state["pos"]:state["pos"] + b]
        state["pos"] += b
        x = images.index_select(0, idx).float().div_(255).sub_(mean).div_(std)
        if args.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        y = labels.index_select(0, idx)
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step


def infer_step_fn(model, spec, args):
    """One inference step as dlbench's (core/model/model_infer.c): one
    batch prepared once, then a forward pass in inference mode; bf16 as
    dlbench runs it, the whole model converted to bf16 once and the fp32
    input cast on each step, the output handed back as fp32."""
    import torch
    dtype = torch.bfloat16 if args.precision == "bf16" else torch.float32
    model.eval().to(dtype)
    x = torch.randn((args.batch,) + spec["input"], generator=torch.Generator().manual_seed(args.seed))
    if args.channels_last:
        x = x.contiguous(memory_format=torch.channels_last)

    def step():
        with torch.inference_mode():
            return model(x.to(dtype)).float()
    return step


def measure(args):
    import torch
    torch.manual_seed(args.seed)
    # The same thread count as dlbench's `threads` key. dlbench also pins
    # its threads one per allowed CPU; PyTorch is left as users run it.
    torch.set_num_threads(args.threads)
    if args.torchvision:
        spec = parse_net(args.model)
        model = build_torchvision(args.torchvision, spec)
        checked = check_torchvision(spec, model, args.batch)
    else:
        spec = parse_model(args.model)
        model = build(spec)
        checked = check(spec, model, args.batch)
    result = {"torch": torch.__version__, "threads": torch.get_num_threads(),
              "mode": args.mode, "batch": args.batch, "precision": args.precision,
              "channels_last": args.channels_last, "torchvision": args.torchvision,
              "check": checked, "variants": {}}
    if args.channels_last:
        # NHWC activations, the layout PyTorch's CPU convolutions prefer
        # (dlbench's oneDNN picks its own blocked layouts internally).
        model = model.to(memory_format=torch.channels_last)
    if result["check"]["problems"]:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
        print("vs_pytorch.py: the PyTorch network does not match the model file: "
              + "; ".join(result["check"]["problems"]), file=sys.stderr)
        return 1
    status = 0
    for variant in args.variants.split(","):
        m = model
        if variant == "compile":
            # The model compiled as users do, the optimizer left eager.
            m = torch.compile(model)
        elif variant != "eager":
            raise SystemExit(f"vs_pytorch.py: unknown variant {variant}")
        make = train_step_fn if args.mode == "train" else infer_step_fn
        try:
            step = make(m, spec, args)
            r = time_steps(step, args.warmup, args.time_cap, args.min_samples,
                           args.warmup_steps)
        except Exception as e:  # a failed variant is reported, the others still run
            traceback.print_exc()  # into the .err file beside the figures
            first_line = (str(e).strip().splitlines() or [""])[0]
            r = {"error": f"{type(e).__name__}: {first_line}"}
            status = 1
        else:
            r["throughput"] = args.batch / r["median_s"]
            print(f"vs_pytorch.py: {spec['path']} {args.mode} {args.precision} batch "
                  f"{args.batch} {variant}: {r['median_s'] * 1e3:.3f} ms a step, "
                  f"{r['throughput']:.1f} samples/s, {r['n']} samples", file=sys.stderr)
        result["variants"][variant] = r
        with open(args.json, "w") as f:  # after each variant: a crash keeps the rest
            json.dump(result, f, indent=2)
    return status


# ---------------------------------------------------------------------------
# The table, from the run directory vs-pytorch.sh writes:
#   workloads.tsv      name, label, unit, model, mode, batch, precision, compile
#   dlbench/NAME-rK/   dlbench's run directory of round K
#   pytorch/NAME-rK.json, pytorch/NAME-rK.err   the PyTorch side's

def last_line(path):
    """The last non-empty line of a log, or ""."""
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f if l.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def dlbench_figure(path, unit):
    """(value, params, flops_fwd, error, doubtful) from a dlbench results.json."""
    try:
        with open(path) as f:
            rec = json.load(f)["records"][0]
    except (OSError, ValueError, KeyError, IndexError) as e:
        err = last_line(os.path.dirname(path) + ".err")
        return None, None, None, f"no results ({type(e).__name__}) {err}".strip(), None
    mets = rec.get("metrics", {})
    params = mets.get("params", {}).get("value")
    flops = mets.get("model_flops_fwd", {}).get("value")
    if rec.get("status") != "ok":
        return None, params, flops, f"{rec.get('status')}: {rec.get('reason', '')}", None
    doubtful = rec.get("system", {}).get("doubtful")
    if unit == "us":
        return rec["stats"]["median"] * 1e6, params, flops, None, doubtful
    return rec["throughput"]["median"], params, flops, None, doubtful


def dlbench_peak_share(path):
    """The record's share of the fp32 peak of the same sitting (percent),
    or None where the run had no peak probe to compare with."""
    try:
        with open(path) as f:
            rec = json.load(f)["records"][0]
        return rec["metrics"]["peak_share"]["value"]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def pytorch_figures(path, unit):
    """{variant: (value or None, error, doubtful)}, the whole record, and
    an error, from one run."""
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        last = last_line(path[:-len(".json")] + ".err")
        return {}, None, f"no results ({type(e).__name__}) {last}".strip()
    out = {}
    for v, r in d.get("variants", {}).items():
        if "error" in r:
            out[v] = (None, r["error"], None)
        else:
            out[v] = (r["median_s"] * 1e6 if unit == "us" else r["throughput"], None,
                      r.get("doubtful"))
    return out, d, None


def spread(values):
    """(median, min, max) of the rounds that gave a figure, or None."""
    v = [x for x in values if x is not None]
    return (statistics.median(v), min(v), max(v)) if v else None


def fmt(cell):
    if cell is None:
        return "-"
    med, lo, hi = cell
    digits = 0 if med >= 100 else 1 if med >= 10 else 2
    return f"{med:.{digits}f} [{lo:.{digits}f}-{hi:.{digits}f}]"


def speed_ratio(dlb, other, unit):
    """dlbench's speed over PyTorch's: above 1, dlbench is faster."""
    if dlb is None or other is None:
        return "-"
    r = other[0] / dlb[0] if unit == "us" else dlb[0] / other[0]
    return f"{r:.2f}"


def report(args):
    run = args.dir
    rounds = int(open(os.path.join(run, "rounds")).read())
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(run, "workloads.tsv"))
            if l.strip() and not l.startswith("#")]
    table, notes, checks, doubtful, compile_s, peak_shares = [], [], {}, [], {}, []
    torch_version = threads = channels_last = None
    failed = False
    summary = {"rounds": rounds, "workloads": []}
    for name, label, unit, model, mode, batch, prec, comp, *tv in rows:
        per = {"dlbench": [], "eager": [], "compile": []}
        shares = []
        for k in range(1, rounds + 1):
            shares.append(dlbench_peak_share(
                os.path.join(run, "dlbench", f"{name}-r{k}", "results.json")))
            v, params, flops, err, doubt = dlbench_figure(
                os.path.join(run, "dlbench", f"{name}-r{k}", "results.json"), unit)
            per["dlbench"].append(v)
            if doubt:
                doubtful.append(f"dlbench {name} r{k}")
            if err:
                notes.append(f"{label}, round {k}: dlbench {err}")
                failed = failed or not err.startswith("skipped")
            figs, d, err = pytorch_figures(os.path.join(run, "pytorch", f"{name}-r{k}.json"), unit)
            if err:
                notes.append(f"{label}, round {k}: PyTorch {err}")
                failed = True
            variants = ["eager"] + (["compile"] if comp == "yes" else [])
            for var in variants:
                val, verr, doubt = figs.get(var, (None, None if err else "not run", None))
                per[var].append(val)
                if doubt:
                    doubtful.append(f"PyTorch {var} {name} r{k}")
                if verr:
                    notes.append(f"{label}, round {k}: PyTorch {var}: {verr}")
                    failed = True
            if d:
                first = d["variants"].get("compile", {}).get("first_step_s")
                if first is not None:
                    compile_s.setdefault(label, []).append(first)
                torch_version, threads = d.get("torch"), d.get("threads")
                channels_last = d.get("channels_last")
                c = checks.setdefault(os.path.basename(model), {})
                c["pytorch"] = (d["check"]["params"], d["check"]["flops_fwd"],
                                d["check"]["output_shape"][1:], d["check"]["problems"],
                                d.get("torchvision"), d["check"].get("macs_fwd"))
            if params is not None:
                checks.setdefault(os.path.basename(model), {})["dlbench"] = (params, flops)
        cells = {key: spread(vals) for key, vals in per.items()}
        if spread(shares):
            peak_shares.append((label, spread(shares)))
        if comp != "yes":
            cells["compile"] = None
        table.append((label, "us (p50)" if unit == "us" else "samples/s", cells, unit,
                      comp == "yes"))
        summary["workloads"].append({"name": name, "label": label, "unit": unit,
                                     "model": model, "mode": mode, "batch": int(batch),
                                     "precision": prec, "rounds": per})
    head = ("workload", "unit", "dlbench", "PyTorch eager", "torch.compile",
            "dlb/eager", "dlb/compile")
    w = [max(len(head[0]), *(len(t[0]) for t in table)), 9, 24, 24, 24, 9, 11]
    line = lambda cols: "  ".join(str(c).ljust(w[i]) if i < 2 else str(c).rjust(w[i])
                                  for i, c in enumerate(cols))
    print(line(head))
    for label, unit_name, cells, unit, comp in table:
        print(line((label, unit_name, fmt(cells["dlbench"]), fmt(cells["eager"]),
                    fmt(cells["compile"]) if comp else "n/a",
                    speed_ratio(cells["dlbench"], cells["eager"], unit),
                    speed_ratio(cells["dlbench"], cells["compile"], unit) if comp else "")))
    print(f"median over {rounds} round(s) [min-max between rounds]; ratios are "
          "dlbench's speed over PyTorch's (for latency, PyTorch's p50 over "
          "dlbench's): above 1, dlbench is faster")
    # torch.compile's LeNet inference at its best batch.
    best = [(t[2]["compile"][0], t[0]) for t in table
            if t[4] and "infer" in t[0].lower() and t[2]["compile"] and t[3] != "us"]
    if best:
        v, label = max(best)
        print(f"torch.compile's best LeNet inference: {label}, {v:.0f} samples/s")
    if peak_shares:
        print("dlbench's share of the peak probed in the same sitting (its "
              "record's peak_share): " + ", ".join(f"{k} {fmt(v)}%" for k, v in peak_shares))
    if compile_s:
        print("torch.compile's first step (compiling; cached after the first "
              "round): " + ", ".join(f"{k}: {'/'.join(f'{x:.1f}' for x in v)} s"
                                     for k, v in compile_s.items()))
    if torch_version:
        print(f"PyTorch {torch_version}, {threads} threads, "
              f"{'channels_last' if channels_last else 'default (NCHW)'} layout")
    for model, c in sorted(checks.items()):
        d, p = c.get("dlbench"), c.get("pytorch")
        if not d or not p:
            print(f"{model}: parameter check not possible (one side gave no figures)")
            continue
        if p[4]:
            # torchvision's graph: dlbench's FLOPs (every layer counted)
            # and the MACs of the convolutions and linear layers are
            # different figures; the parameters must agree exactly.
            ok = d[0] == p[0] and not p[3]
            print(f"{model}: parameters dlbench {d[0]:.0f}, PyTorch (torchvision "
                  f"{p[4]}) {p[0]}; forward per image dlbench {d[1] / 1e9:.2f} GFLOP, "
                  f"torchvision {p[5] / 1e9:.2f} GMAC; output "
                  f"[batch, {', '.join(map(str, p[2]))}]: {'same' if ok else 'DIFFERENT'}")
        else:
            ok = d[0] == p[0] and d[1] == p[1] and not p[3]
            print(f"{model}: parameters dlbench {d[0]:.0f}, PyTorch {p[0]}; forward FLOPs "
                  f"per image dlbench {d[1]:.0f}, PyTorch's shapes {p[1]}; output "
                  f"[batch, {', '.join(map(str, p[2]))}]: {'same' if ok else 'DIFFERENT'}")
        failed = failed or not ok
        for problem in p[3]:
            print(f"  {problem}")
    for n in notes:
        print(f"note: {n}")
    if doubtful:
        print(f"note: measured while something else ran (threads preempted 100 "
              f"times a second or more), figures to be taken again on a quiet "
              f"machine: {', '.join(doubtful)}")
    summary["checks"] = checks
    with open(os.path.join(run, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="build the network and check its shapes")
    c.add_argument("--model", required=True)
    c.add_argument("--batch", type=int, default=2)
    m = sub.add_parser("measure", help="time training or inference steps")
    m.add_argument("--model", required=True)
    m.add_argument("--mode", choices=("train", "infer"), required=True)
    m.add_argument("--batch", type=int, required=True)
    m.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    m.add_argument("--threads", type=int, required=True)
    m.add_argument("--variants", default="eager", help="eager,compile")
    m.add_argument("--channels-last", action="store_true",
                   help="NHWC activations (default: PyTorch's default NCHW)")
    m.add_argument("--warmup", type=float, default=1.0, help="seconds")
    m.add_argument("--time-cap", type=float, default=6.0, help="seconds")
    m.add_argument("--min-samples", type=int, default=10)
    m.add_argument("--warmup-steps", type=int, default=5,
                   help="at least this many warm-up steps (after the first)")
    m.add_argument("--torchvision", metavar="NAME",
                   help="torchvision's network NAME instead of the file's layers")
    m.add_argument("--lr", type=float, default=0.01)
    m.add_argument("--momentum", type=float, default=0.9)
    m.add_argument("--seed", type=int, default=42)
    m.add_argument("--json", required=True, help="where the figures go")
    r = sub.add_parser("report", help="print the table of a run directory")
    r.add_argument("dir")
    args = ap.parse_args()
    try:
        if args.cmd == "report":
            return report(args)
        if args.cmd == "check":
            spec = parse_model(args.model)
            res = check(spec, build(spec), args.batch)
            print(json.dumps(res, indent=2))
            return 1 if res["problems"] else 0
        return measure(args)
    except ModelFileError as e:
        print(f"vs_pytorch.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
