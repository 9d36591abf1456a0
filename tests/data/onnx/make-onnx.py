#!/usr/bin/python3
"""Make the small ONNX models tests/unit/test_onnx_import and
tests/integration/onnx.sh read, with the outputs they must give.

    /usr/bin/python3 tests/data/onnx/make-onnx.py [OUTDIR]

Needs python3-onnx and python3-numpy (Debian). The weights are seeded, so
a rerun writes the same files. Each good model NAME.onnx comes with
NAME.in.txt (its input: N x C x H x W floats, one per line, N first on
the first line) and NAME.out.txt (N x classes log-probabilities: the log
softmax of the model's logits, which is what dlbench's inference gives),
computed here in numpy in float64, independently of dlbench and of ONNX
runtimes.

Models:
  tiny_res     1x28x28: Conv+BatchNormalization+Relu, a residual block
               (Add), MaxPool, GlobalAveragePool, Flatten, Gemm (transB=1);
               opset 13
  tiny_dw      3x8x8: Conv with bias, Clip(0,6) with min/max inputs, a
               depthwise Conv (group 8), Concat with a 1x1 Conv branch,
               AveragePool, Identity, Reshape to [0,-1], Dropout (ratio
               input), MatMul + Add (bias), Softmax; opset 17
  ext_data     tiny_res with its first Conv's weight in ext_data.bin
               (external data, loaded from beside the file): the same
               input and outputs as tiny_res
Bad models (each must be refused, naming what is wrong):
  bad_op       a LeakyRelu node 'Leaky_3'
  bad_attr     a Conv 'Conv_12' with dilations [2,2]
  bad_shape    an Add of 4 and 8 channels
  bad_extpath  external data at ../outside.bin (outside the model's folder)
  truncated    the first half of tiny_res.onnx
  bad_const_input  a Conv 'Conv_2' whose data input is an initializer
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261204)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- numpy reference (float64) -------------------------------------------

def conv(x, w, b=None, stride=1, pad=0, group=1):
    n, c, h, wd = x.shape
    m, cg, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - k) // stride + 1
    ow = (wd + 2 * pad - k) // stride + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * mg:(g + 1) * mg]
        for r in range(k):
            for s in range(k):
                patch = xs[:, :, r:r + stride * oh:stride, s:s + stride * ow:stride]
                y[:, g * mg:(g + 1) * mg] += np.einsum('nchw,mc->nmhw', patch, ws[:, :, r, s])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def bn(x, scale, bias, mean, var, eps):
    sh = (1, -1, 1, 1)
    return (x - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * scale.reshape(sh) + bias.reshape(sh)


def pool(x, k, stride, kind):
    n, c, h, w = x.shape
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    win = np.stack([x[:, :, r:r + stride * oh:stride, s:s + stride * ow:stride]
                    for r in range(k) for s in range(k)])
    return win.max(0) if kind == 'max' else win.mean(0)


def log_softmax(z):
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


# ---- writing ---------------------------------------------------------------

def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def save(name, nodes, inits, in_shape, n_out, opset, inp=None, out=None):
    x = helper.make_tensor_value_info('image', TensorProto.FLOAT, ['N'] + list(in_shape))
    y = helper.make_tensor_value_info('scores', TensorProto.FLOAT, ['N', n_out])
    g = helper.make_graph(nodes, name, [x], [y], initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)],
                              producer_name='make-onnx.py')
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name + '.onnx'))
    if inp is not None:
        write_values(name + '.in.txt', inp)
        write_values(name + '.out.txt', out)
    return model


def write_values(fname, a):
    with open(os.path.join(OUT, fname), 'w') as f:
        f.write(' '.join(str(d) for d in a.shape) + '\n')
        for v in a.reshape(-1):
            f.write('%.9g\n' % v)


def bn_params(prefix, c):
    return {prefix + '.scale': rng.uniform(0.5, 1.5, c).astype(np.float32),
            prefix + '.bias': rand(c, scale=0.1),
            prefix + '.mean': rand(c, scale=0.1),
            prefix + '.var': rng.uniform(0.5, 1.5, c).astype(np.float32)}


def bn_node(name, x, y, prefix, eps=1e-5):
    return helper.make_node('BatchNormalization', [x, prefix + '.scale', prefix + '.bias',
                                                   prefix + '.mean', prefix + '.var'],
                            [y], name=name, epsilon=eps, momentum=0.9)


# ---- tiny_res --------------------------------------------------------------

def tiny_res():
    p = {'conv1.w': rand(4, 1, 3, 3, scale=0.5), 'conv2.w': rand(4, 4, 3, 3, scale=0.3),
         'fc.w': rand(10, 4, scale=0.5), 'fc.b': rand(10, scale=0.1)}
    p.update(bn_params('bn1', 4))
    p.update(bn_params('bn2', 4))
    nodes = [
        helper.make_node('Conv', ['image', 'conv1.w'], ['c1'], name='conv1',
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        bn_node('bn1', 'c1', 'b1', 'bn1'),
        helper.make_node('Relu', ['b1'], ['r1'], name='relu1'),
        helper.make_node('Conv', ['r1', 'conv2.w'], ['c2'], name='conv2',
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        bn_node('bn2', 'c2', 'b2', 'bn2'),
        helper.make_node('Add', ['b2', 'r1'], ['s'], name='residual'),
        helper.make_node('Relu', ['s'], ['r2'], name='relu2'),
        helper.make_node('MaxPool', ['r2'], ['mp'], name='pool', kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node('GlobalAveragePool', ['mp'], ['gap'], name='gap'),
        helper.make_node('Flatten', ['gap'], ['flat'], name='flatten', axis=1),
        helper.make_node('Gemm', ['flat', 'fc.w', 'fc.b'], ['scores'], name='fc', transB=1),
    ]
    x = rng.uniform(-1, 1, (2, 1, 28, 28)).astype(np.float32)
    f = {k: v.astype(np.float64) for k, v in p.items()}
    r1 = np.maximum(bn(conv(x, f['conv1.w'], pad=1), f['bn1.scale'], f['bn1.bias'],
                       f['bn1.mean'], f['bn1.var'], 1e-5), 0)
    b2 = bn(conv(r1, f['conv2.w'], pad=1), f['bn2.scale'], f['bn2.bias'], f['bn2.mean'],
            f['bn2.var'], 1e-5)
    r2 = np.maximum(b2 + r1, 0)
    gap = pool(r2, 2, 2, 'max').mean((2, 3))
    logits = gap @ f['fc.w'].T + f['fc.b']
    inits = [init(k, v) for k, v in p.items()]
    return save('tiny_res', nodes, inits, [1, 28, 28], 10, 13, x, log_softmax(logits)), \
        x, log_softmax(logits)


# ---- tiny_dw ---------------------------------------------------------------

def tiny_dw():
    p = {'conv1.w': rand(8, 3, 3, 3, scale=0.4), 'conv1.b': rand(8, scale=0.1),
         'dw.w': rand(8, 1, 3, 3, scale=0.5), 'pw.w': rand(4, 8, 1, 1, scale=0.5),
         'fc.w': rand(12 * 4 * 4, 10, scale=0.1), 'fc.b': rand(10, scale=0.1)}
    consts = [init('zero', np.array(0, np.float32)), init('six', np.array(6, np.float32)),
              init('flat_shape', np.array([0, -1], np.int64)),
              init('drop_ratio', np.array(0.25, np.float32))]
    nodes = [
        helper.make_node('Conv', ['image', 'conv1.w', 'conv1.b'], ['c1'], name='conv1',
                         pads=[1, 1, 1, 1]),
        helper.make_node('Clip', ['c1', 'zero', 'six'], ['a1'], name='relu6_1'),
        helper.make_node('Conv', ['a1', 'dw.w'], ['d1'], name='depthwise', group=8,
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node('Clip', ['d1', 'zero', 'six'], ['a2'], name='relu6_2'),
        helper.make_node('Conv', ['a1', 'pw.w'], ['p1'], name='pointwise'),
        helper.make_node('Concat', ['a2', 'p1'], ['cat'], name='concat', axis=1),
        helper.make_node('AveragePool', ['cat'], ['ap'], name='avgpool',
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node('Identity', ['ap'], ['ap_id'], name='identity'),
        helper.make_node('Reshape', ['ap_id', 'flat_shape'], ['flat'], name='reshape'),
        helper.make_node('Dropout', ['flat', 'drop_ratio'], ['drop'], name='dropout'),
        helper.make_node('MatMul', ['drop', 'fc.w'], ['mm'], name='fc'),
        helper.make_node('Add', ['mm', 'fc.b'], ['logits'], name='fc_bias'),
        helper.make_node('Softmax', ['logits'], ['scores'], name='softmax', axis=-1),
    ]
    x = rng.uniform(-1, 1, (3, 3, 8, 8)).astype(np.float32)
    f = {k: v.astype(np.float64) for k, v in p.items()}
    a1 = np.clip(conv(x, f['conv1.w'], f['conv1.b'], pad=1), 0, 6)
    a2 = np.clip(conv(a1, f['dw.w'], pad=1, group=8), 0, 6)
    p1 = conv(a1, f['pw.w'])
    ap = pool(np.concatenate([a2, p1], 1), 2, 2, 'avg')
    logits = ap.reshape(3, -1) @ f['fc.w'] + f['fc.b']
    inits = [init(k, v) for k, v in p.items()] + consts
    save('tiny_dw', nodes, inits, [3, 8, 8], 10, 17, x, log_softmax(logits))


# ---- external data -----------------------------------------------------------

def external(model, name, location, bin_name):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for t in m.graph.initializer:
        if t.name == 'conv1.w':
            data = t.raw_data if t.raw_data else numpy_helper.to_array(t).tobytes()
            pad = b'\0' * 16  # the tensor sits at an offset, as exporters align it
            if bin_name:
                with open(os.path.join(OUT, bin_name), 'wb') as f:
                    f.write(pad + data)
            t.ClearField('raw_data')
            t.ClearField('float_data')
            t.data_location = TensorProto.EXTERNAL
            for k, v in (('location', location), ('offset', str(len(pad))),
                         ('length', str(len(data)))):
                e = t.external_data.add()
                e.key, e.value = k, v
    with open(os.path.join(OUT, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


# ---- bad models ----------------------------------------------------------------

def bad_models(res):
    w = init('w', rand(4, 1, 3, 3))
    fc = init('fc.w', rand(10, 4))
    tail = [helper.make_node('GlobalAveragePool', ['h'], ['g'], name='gap'),
            helper.make_node('Flatten', ['g'], ['f'], name='flat'),
            helper.make_node('Gemm', ['f', 'fc.w'], ['scores'], name='fc', transB=1)]
    save('bad_op', [helper.make_node('Conv', ['image', 'w'], ['c'], name='Conv_1'),
                    helper.make_node('LeakyRelu', ['c'], ['h'], name='Leaky_3', alpha=0.1)]
         + tail, [w, fc], [1, 28, 28], 10, 13)
    save('bad_attr', [helper.make_node('Conv', ['image', 'w'], ['h'], name='Conv_12',
                                       dilations=[2, 2])] + tail, [w, fc], [1, 28, 28], 10, 13)
    w8 = init('w8', rand(8, 1, 3, 3))
    save('bad_shape', [helper.make_node('Conv', ['image', 'w'], ['a'], name='conv_a'),
                       helper.make_node('Conv', ['image', 'w8'], ['b'], name='conv_b'),
                       helper.make_node('Add', ['a', 'b'], ['h'], name='Add_7')] + tail,
         [w, w8, fc], [1, 28, 28], 10, 13)
    external(res, 'bad_extpath', '../outside.bin', None)
    data = res.SerializeToString()
    with open(os.path.join(OUT, 'truncated.onnx'), 'wb') as f:
        f.write(data[:len(data) // 2])
    k = init('k', rand(1, 1, 28, 28))
    save('bad_const_input', [helper.make_node('Conv', ['k', 'w'], ['h'], name='Conv_2')]
         + tail, [k, w, fc], [1, 28, 28], 10, 13)


res, x, out = tiny_res()
tiny_dw()
external(res, 'ext_data', 'ext_data.bin', 'ext_data.bin')
bad_models(res)
