#!/usr/bin/python3
# seq_torch_bench.py: the PyTorch side of the text and sequence benchmark
# (issue 18; bench/seq_bench.c is the engine's).
#
#   OMP_NUM_THREADS=1 /usr/bin/python3 bench/seq_torch_bench.py NET FILE [EPOCHS]
#     NET text | lstm     FILE  the data set seq_bench wrote (seq_bench data NET FILE)
#
# The same samples, models and schedule as seq_bench: text is
# Embedding(20000, 64) (uniform in [-0.05, 0.05]), Conv1d(64, 128, 5) with
# ReLU, the maximum over the steps and a Linear(128, 4); lstm is an
# LSTM(8, 64) (input weights xavier uniform, recurrent weights
# orthogonal, biases zero but the forget gate's 1: Keras' defaults) and a
# Linear(64, 4); cross-entropy on the logits (what the engine's fused
# softmax + crossentropy computes), Adam(lr 0.001, eps 1e-7), batch 64,
# shuffled every epoch, torch.set_num_threads(1).  The first epoch is a
# warm-up: samples/s is the median over the others.  Prints the same
# "key value" lines as seq_bench.  BENCH_SEED=n changes the seed.
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64


def read_data(path):
    with open(path, "rb") as f:
        ntrain, ntest, width, k = np.frombuffer(f.read(16), dtype="<i4")
        xtr = np.frombuffer(f.read(4 * ntrain * width), dtype="<f4").reshape(ntrain, width)
        ytr = np.frombuffer(f.read(4 * ntrain), dtype="<i4")
        xte = np.frombuffer(f.read(4 * ntest * width), dtype="<f4").reshape(ntest, width)
        yte = np.frombuffer(f.read(4 * ntest), dtype="<i4")
    return xtr, ytr.astype(np.int64), xte, yte.astype(np.int64), int(k)


class Text(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.emb = nn.Embedding(20000, 64)
        self.conv = nn.Conv1d(64, 128, 5)
        self.head = nn.Linear(128, k)
        nn.init.uniform_(self.emb.weight, -0.05, 0.05)
        for m in (self.conv, self.head):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(self, x):
        y = self.emb(x).transpose(1, 2)         # (B, 64, 100)
        y = torch.relu(self.conv(y))            # (B, 128, 96)
        return self.head(y.max(dim=2).values)


class Lstm(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.lstm = nn.LSTM(8, 64, batch_first=True)
        self.head = nn.Linear(64, k)
        nn.init.xavier_uniform_(self.lstm.weight_ih_l0)
        nn.init.orthogonal_(self.lstm.weight_hh_l0)
        nn.init.zeros_(self.lstm.bias_ih_l0)
        nn.init.zeros_(self.lstm.bias_hh_l0)
        with torch.no_grad():
            self.lstm.bias_ih_l0[64:128] = 1.0
        nn.init.xavier_uniform_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, x):
        _, (h, _) = self.lstm(x.reshape(x.shape[0], 50, 8))
        return self.head(h[0])


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("text", "lstm"):
        sys.exit("usage: seq_torch_bench.py text|lstm FILE [EPOCHS]")
    net, path = sys.argv[1], sys.argv[2]
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    torch.set_num_threads(1)
    torch.manual_seed(int(os.environ.get("BENCH_SEED", "42")))
    xtr, ytr, xte, yte, k = read_data(path)
    if net == "text":
        xtr_t, xte_t = torch.from_numpy(xtr.astype(np.int64)), torch.from_numpy(xte.astype(np.int64))
        model = Text(k)
    else:
        xtr_t, xte_t = torch.from_numpy(xtr.copy()), torch.from_numpy(xte.copy())
        model = Lstm(k)
    ytr_t = torch.from_numpy(ytr)
    opt = torch.optim.Adam(model.parameters(), lr=0.001, eps=1e-7)
    n = xtr_t.shape[0]
    wall, cpu = [], []
    for e in range(epochs):
        t0, c0 = time.monotonic(), time.process_time()
        perm = torch.randperm(n)
        total = 0.0
        for i in range(0, n, BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = F.cross_entropy(model(xtr_t[idx]), ytr_t[idx])
            loss.backward()
            opt.step()
            total += float(loss) * len(idx)
        wall.append(time.monotonic() - t0)
        cpu.append(time.process_time() - c0)
        print("epoch_s_%d %.3f" % (e + 1, wall[-1]))
        print("loss_%d %.5f" % (e + 1, total / n))
    with torch.no_grad():
        pred = torch.cat([model(xte_t[i:i + 256]).argmax(dim=1) for i in range(0, len(xte_t), 256)])
    first = 1 if epochs > 1 else 0
    print("samples_per_s %.1f" % (n / statistics.median(wall[first:])))
    print("samples_per_cpu_s %.1f" % (n / statistics.median(cpu[first:])))
    print("test_acc %.4f" % float((pred.numpy() == yte).mean()))
    print("torch_version %s" % torch.__version__)


main()
