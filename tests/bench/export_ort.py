"""The Python side of tests/bench/export-ort.sh: a seeded random batch for
a model file, and onnxruntime's view of the file against dlbench's.

  export_ort.py input MODEL.onnx BATCH OUT.f32
      OUT.f32: BATCH random images (normal, seed 7) of the model's
      C x H x W, raw little-endian float32
  export_ort.py compare MODEL.onnx IN.f32 DLBENCH.f32 TOL AGREE
      onnxruntime runs MODEL on IN; its logits through log-softmax are
      compared with dlbench's log-probabilities (onnx_infer's output):
      prints the largest difference, the top-1 agreement and the mean
      log-probability of the top class; exit 1 when a value is further
      apart than TOL * max(1, |ort|) or fewer than AGREE (a fraction) of
      the images get the same top-1 class.
"""
import sys

import numpy as np
import onnx


def chw(path):
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    return [d.dim_value for d in dims[1:]]


def make_input(path, batch, out):
    rng = np.random.default_rng(7)
    x = rng.standard_normal([int(batch)] + chw(path)).astype("<f4")
    x.tofile(out)


def log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def compare(path, inp, dlb, tol, min_agree):
    import onnxruntime as ort

    x = np.fromfile(inp, dtype="<f4").reshape([-1] + chw(path))
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    logits = sess.run(None, {name: x})[0].astype(np.float64)
    ours = np.fromfile(dlb, dtype="<f4").astype(np.float64)
    ours = ours.reshape(logits.shape)
    theirs = log_softmax(logits)
    diff = np.abs(ours - theirs)
    worst = float((diff / np.maximum(1.0, np.abs(theirs))).max())
    agree = float((ours.argmax(1) == theirs.argmax(1)).mean())
    print(f"{path}: {x.shape[0]} images, onnxruntime {ort.__version__}: "
          f"largest |dlbench - onnxruntime| {diff.max():.3g} "
          f"(relative {worst:.3g}, bound {tol}), top-1 agreement "
          f"{100 * agree:.1f}%, mean top log-probability dlbench "
          f"{ours.max(1).mean():.4f} onnxruntime {theirs.max(1).mean():.4f}")
    return 0 if worst <= float(tol) and agree >= float(min_agree) else 1


def main(argv):
    if len(argv) == 5 and argv[1] == "input":
        make_input(argv[2], argv[3], argv[4])
        return 0
    if len(argv) == 7 and argv[1] == "compare":
        return compare(argv[2], argv[3], argv[4], argv[5], argv[6])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
