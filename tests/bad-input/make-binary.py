#!/usr/bin/env python3
"""The binary cases of the bad-input catalogue, written deterministically:
IDX data sets (idx/NAME/, files that replace those of a small good set)
and safetensors checkpoints (safetensors/NAME.safetensors). Run it from
anywhere after changing a case; the .expect files are written by hand.

    make-binary.py            rewrite idx/ and safetensors/ cases here
    make-binary.py good DIR   write a small valid Fashion-MNIST-shaped set
                              (20 training, 10 test images) into DIR
"""
import gzip, io, json, os, struct, sys

HERE = os.path.dirname(os.path.abspath(__file__))
N_TRAIN, N_TEST = 20, 10


def idx(magic_type, dims, payload, ndim=None):
    nd = len(dims) if ndim is None else ndim
    head = bytes([0, 0, magic_type, nd]) + b''.join(struct.pack('>I', d) for d in dims)
    return head + payload


def images(n, h=28, w=28):
    return idx(8, [n, h, w], bytes((i * 7 + i // 784) % 256 for i in range(n * h * w)))


def labels(n, top=10):
    return idx(8, [n], bytes(i % top for i in range(n)))


def gz(data):
    # mtime 0: the same bytes on every run
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode='wb', mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def good_set():
    return {
        'train-images-idx3-ubyte.gz': gz(images(N_TRAIN)),
        'train-labels-idx1-ubyte.gz': gz(labels(N_TRAIN)),
        't10k-images-idx3-ubyte.gz': gz(images(N_TEST)),
        't10k-labels-idx1-ubyte.gz': gz(labels(N_TEST)),
    }


def idx_cases():
    g = good_set()
    ti, tl = 'train-images-idx3-ubyte', 'train-labels-idx1-ubyte'
    good_ti = gz(images(N_TRAIN))
    corrupt = bytearray(good_ti)
    for k in range(40, 60):           # inside the deflate data
        corrupt[k] ^= 0x5A
    bad_crc = bytearray(good_ti)
    bad_crc[-8] ^= 0xFF               # the CRC-32 in the gzip trailer
    return {
        'truncated-gz': {ti + '.gz': good_ti[:len(good_ti) // 2]},
        'truncated-raw': {ti + '.gz.absent': b'', ti: images(N_TRAIN)[:5000]},
        'header-only': {ti + '.gz': gz(images(N_TRAIN)[:16])},
        'empty-file': {tl + '.gz': b''},
        'bad-magic': {ti + '.gz': gz(b'\x1f\x8b' + images(N_TRAIN)[2:])},
        'float-type': {ti + '.gz': gz(idx(0x0D, [N_TRAIN, 28, 28], bytes(N_TRAIN * 784 * 4)))},
        'wrong-ndim': {ti + '.gz': gz(idx(8, [N_TRAIN, 784], bytes(N_TRAIN * 784)))},
        'labels-for-images': {ti + '.gz': gz(labels(N_TRAIN))},
        'zero-dimension': {ti + '.gz': gz(idx(8, [0, 28, 28], b''))},
        'huge-dimension': {ti + '.gz': gz(idx(8, [1 << 20, 28, 28], bytes(784)))},
        'claims-2gib': {ti + '.gz': gz(idx(8, [1 << 19, 1 << 10, 8], bytes(64)))},
        'trailing-bytes': {ti + '.gz': gz(images(N_TRAIN) + b'\0' * 7)},
        'corrupt-deflate': {ti + '.gz': bytes(corrupt)},
        'bad-gzip-crc': {ti + '.gz': bytes(bad_crc)},
        'label-out-of-range': {tl + '.gz': gz(labels(N_TRAIN, top=11))},
        'count-mismatch': {tl + '.gz': gz(labels(N_TRAIN - 1))},
        'wrong-image-size': {
            ti + '.gz': gz(images(N_TRAIN, 5, 5)),
            't10k-images-idx3-ubyte.gz': gz(images(N_TEST, 5, 5))},
        'test-labels-truncated': {'t10k-labels-idx1-ubyte.gz': gz(labels(N_TEST)[:12])},
        'half-installed': {tl + '.gz.absent': b''},
        'images-is-directory': {ti + '.gz/.keep': b''},
    }


def st(header, data=b'', raw_len=None, pad=True):
    h = json.dumps(header, separators=(',', ':')).encode() if not isinstance(header, bytes) else header
    if pad and len(h) % 8:
        h += b' ' * (8 - len(h) % 8)
    n = len(h) if raw_len is None else raw_len
    return struct.pack('<Q', n) + h + data


def f32(n):
    return struct.pack('<%df' % n, *([0.5] * n))


def t(dtype, shape, begin, end):
    return {'dtype': dtype, 'shape': shape, 'data_offsets': [begin, end]}


def safetensors_cases():
    w = t('F32', [2, 3], 0, 24)
    return {
        'empty': b'',
        'short-length': b'\x10\x00\x00',
        'header-too-long': struct.pack('<Q', 1 << 40) + b'{}',
        'header-past-end': struct.pack('<Q', 4096) + b'{"a":1}',
        'header-not-json': st(b'{"w": {"dtype": "F32",', f32(6)),
        'header-not-object': st(b'[1, 2, 3]'),
        'header-nul': st(b'{"w\x00": 1}'),
        'unknown-dtype': st({'w': t('F31', [2, 3], 0, 24)}, f32(6)),
        'missing-dtype': st({'w': {'shape': [2, 3], 'data_offsets': [0, 24]}}, f32(6)),
        'negative-shape': st({'w': t('F32', [2, -3], 0, 24)}, f32(6)),
        'nine-dims': st({'w': t('F32', [1] * 9, 0, 4)}, f32(1)),
        'shape-overflow': st({'w': t('F32', [1 << 32, 1 << 32, 1 << 32], 0, 24)}, f32(6)),
        'bytes-mismatch': st({'w': t('F32', [2, 3], 0, 20)}, f32(5)),
        'offsets-reversed': st({'w': t('F32', [0], 24, 0)}, f32(6)),
        'offsets-overlap': st({'a': t('F32', [2, 3], 0, 24), 'b': t('F32', [2, 3], 12, 36)}, f32(9)),
        'offsets-hole': st({'a': t('F32', [1], 0, 4), 'b': t('F32', [1], 8, 12)}, f32(3)),
        'offsets-past-end': st({'w': w}, f32(3)),
        'trailing-data': st({'w': w}, f32(8)),
        'offsets-not-integers': st({'w': {'dtype': 'F32', 'shape': [2, 3], 'data_offsets': ['0', '24']}}, f32(6)),
        'metadata-not-string': st({'__metadata__': {'format': 5}, 'w': w}, f32(6)),
        'duplicate-tensor': st(b'{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                               b'"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', f32(2)),
    }


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(data)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == 'good':
        for name, data in good_set().items():
            write(os.path.join(sys.argv[2], name), data)
        return
    for case, files in idx_cases().items():
        for name, data in files.items():
            write(os.path.join(HERE, 'idx', case, name), data)
    for case, data in safetensors_cases().items():
        write(os.path.join(HERE, 'safetensors', case + '.safetensors'), data)


main()
