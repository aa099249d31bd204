#!/usr/bin/env python3
# gpu_bench.py: the PyTorch side of the GPU benchmark (issue 9), on the
# same GPU as bench/gpu_bench.c, with the same networks, data, optimizer,
# init, batch sizes and timing.
#
#   python3 bench/gpu_bench.py EPOCHS TF32 CONFIG [CONFIG ...]
#     CONFIG  NET,OPT,BATCH   NET mlp | cnn, OPT sgd | adam, BATCH e.g. 128
#     TF32    0: fp32 everywhere (cuBLAS and cuDNN TF32 off, the engine's
#             default); 1: TF32 allowed for matmuls and convolutions
#
# Data: $FASHION_RAW (the four uncompressed IDX files) or synthetic
# random data of the same shapes.  The training set lives on the GPU;
# each epoch draws a permutation on the GPU and indexes mini-batches
# (no host transfer per batch, as the engine).  cudnn.benchmark is on
# (PyTorch picks its fastest convolution algorithms).  The first epoch is
# a warm-up; samples/s is over the others, timed with a synchronize at
# each epoch's end.  Prints per CONFIG one line:
#   torch NET OPT BATCH samples_per_s S epoch_s_min E test_acc A
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn

SEED = 42


def load_split(d, prefix, synth_n):
    if d is None:
        g = np.random.default_rng(synth_n)
        x = g.random((synth_n, 1, 28, 28), dtype=np.float32)
        y = g.integers(0, 10, synth_n)
        return torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))
    with open(os.path.join(d, prefix + "-images-idx3-ubyte"), "rb") as f:
        img = f.read()
    with open(os.path.join(d, prefix + "-labels-idx1-ubyte"), "rb") as f:
        lab = f.read()
    magic, n, h, w = struct.unpack(">IIII", img[:16])
    lmagic, ln = struct.unpack(">II", lab[:8])
    if magic != 0x803 or lmagic != 0x801 or n != ln or (h, w) != (28, 28):
        sys.exit("gpu_bench.py: bad IDX file " + prefix)
    x = np.frombuffer(img, dtype=np.uint8, offset=16).reshape(n, 1, 28, 28)
    y = np.frombuffer(lab, dtype=np.uint8, offset=8)
    return (torch.from_numpy(x.astype(np.float32) / np.float32(255.0)),
            torch.from_numpy(y.astype(np.int64)))


def make_net(name):
    if name == "mlp":
        net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                            nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    else:
        net = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(),
                            nn.Linear(128, 10))
    for mod in net.modules():
        if isinstance(mod, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(mod.weight)
            nn.init.zeros_(mod.bias)
    return net


def run(net_name, opt_name, batch, epochs, x, y, xt, yt):
    torch.manual_seed(SEED)
    dev = x.device
    net = make_net(net_name).to(dev)
    if opt_name == "adam":
        opt = torch.optim.Adam(net.parameters(), lr=0.001, eps=1e-7)
    else:
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    n = x.shape[0]
    times = []
    for e in range(epochs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        perm = torch.randperm(n, device=dev)
        for s in range(0, n, batch):
            idx = perm[s:s + batch]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(x[idx]), y[idx])
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    with torch.no_grad():
        correct = 0
        for s in range(0, xt.shape[0], 1024):
            correct += (net(xt[s:s + 1024]).argmax(1) == yt[s:s + 1024]).sum().item()
    timed = times[1:]
    return n * len(timed) / sum(timed), min(timed), correct / xt.shape[0]


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: gpu_bench.py EPOCHS TF32 NET,OPT,BATCH ...")
    epochs = int(sys.argv[1])
    tf32 = sys.argv[2] == "1"
    if not torch.cuda.is_available():
        sys.exit("gpu_bench.py: torch.cuda.is_available() is false")
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    raw = os.environ.get("FASHION_RAW")
    if raw in (None, "", "synthetic"):
        raw = None
    x, y = load_split(raw, "train", 60000)
    xt, yt = load_split(raw, "t10k", 10000)
    dev = torch.device("cuda:0")
    x, y, xt, yt = x.to(dev), y.to(dev), xt.to(dev), yt.to(dev)
    print("torch_version %s device %s" % (torch.__version__, torch.cuda.get_device_name(0)),
          flush=True)
    for cfg in sys.argv[3:]:
        net_name, opt_name, batch = cfg.split(",")
        sps, emin, acc = run(net_name, opt_name, int(batch), epochs, x, y, xt, yt)
        print("torch %s %s %s samples_per_s %.0f epoch_s_min %.4f test_acc %.4f"
              % (net_name, opt_name, batch, sps, emin, acc), flush=True)


if __name__ == "__main__":
    main()
