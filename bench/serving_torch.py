#!/usr/bin/python3
# serving_torch.py: the PyTorch side of bench/serving_bench.sh (issue 28).
#
#   OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/serving_torch.py WEIGHTS_B64 ROWS [CHECK_CLASSES]
#
# The MLP of serving_bench.sh (SERVING_SIZES, default 784,256,128,10; ReLU, softmax) with the
# weights the model table holds (WEIGHTS_B64: model_weights in base64, flat
# float32 in Keras get_weights() order: kernel (in, out) then bias, per
# layer), on the first ROWS Fashion-MNIST training images / 255 from the
# gzipped IDX files, in one thread (torch.set_num_threads(1)), in
# inference mode.  Prints "torch_row_rows_per_s N" (one forward pass per
# row, batch 1, as predict_row does) and "torch_batch_rows_per_s N"
# (batches of 1024).  With CHECK_CLASSES (a file of one class index per
# row, predict_row's, in id order), prints "torch_same_class K of N".
import base64
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch

torch.set_num_threads(1)
wpath, rows = sys.argv[1], int(sys.argv[2])
w = np.frombuffer(base64.b64decode(open(wpath).read()), dtype='<f4')
sizes = [int(v) for v in os.environ.get('SERVING_SIZES', '784,256,128,10').split(',')]
layers, off = [], 0
for a, b in zip(sizes, sizes[1:]):
    k = torch.from_numpy(w[off:off + a * b].reshape(a, b).copy()); off += a * b
    bias = torch.from_numpy(w[off:off + b].copy()); off += b
    layers.append((k, bias))
assert off == len(w), 'weights are not those of an MLP %s' % sizes


def forward(x):
    for i, (k, b) in enumerate(layers):
        x = torch.addmm(b, x, k)
        x = torch.relu(x) if i < len(layers) - 1 else torch.softmax(x, dim=1)
    return x


d = os.environ.get('FASHION_MNIST_DIR', '/usr/share/datasets/fashion-mnist')
with gzip.open(os.path.join(d, 'train-images-idx3-ubyte.gz')) as f:
    _, n, r, c = struct.unpack('>IIII', f.read(16))
    imgs = np.frombuffer(f.read(), dtype=np.uint8).reshape(n, r * c)
X = torch.from_numpy(imgs[:rows].astype(np.float32) / np.float32(255.0))
with torch.inference_mode():
    forward(X[:64])
    t = time.perf_counter()
    classes = []
    for i in range(rows):
        classes.append(int(torch.argmax(forward(X[i:i + 1]), dim=1)))
    row_s = time.perf_counter() - t
    t = time.perf_counter()
    for i in range(0, rows, 1024):
        forward(X[i:i + 1024])
    batch_s = time.perf_counter() - t
print('torch_row_rows_per_s %.0f' % (rows / row_s))
print('torch_batch_rows_per_s %.0f' % (rows / batch_s))
if len(sys.argv) > 3:
    mine = [int(s) for s in open(sys.argv[3]).read().split()]
    same = sum(1 for a, b in zip(mine, classes) if a == b)
    print('torch_same_class %d of %d' % (same, min(len(mine), rows)))
