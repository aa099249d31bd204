#!/usr/bin/python3
# torch_bench.py: the PyTorch side of the engine benchmark (issue 5).
#
#   OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_bench.py NET OPT [EPOCHS [WINDOWS_PER_EPOCH]]
#     NET mlp | cnn | resnet      OPT sgd | adam
#
# Same data, schedule and timing as bench/engine_bench.c: Fashion-MNIST
# from the gzipped IDX files, float32 / 255, batch 128, shuffled every
# epoch; SGD(lr 0.05, momentum 0.9) or Adam(lr 0.001, eps 1e-7, the Keras
# epsilon); glorot (xavier) uniform kernels and zero biases, as Keras;
# cross-entropy on the logits (what the engine's fused softmax +
# crossentropy computes).  One thread (TORCH_THREADS below).  Epochs are cut into
# WINDOWS_PER_EPOCH windows of full batches; the first epoch is a warm-up
# (with a single epoch, its first window is) and samples/s is the median
# over the other windows.  Prints the same "key value" lines as
# engine_bench.  BENCH_SEED=n changes the seed; BENCH_TRAIN_N=n trains on
# the first n samples only (short runs, as engine_bench).  TORCH_THREADS=n
# (default 1) sets torch.set_num_threads, for the all-threads peer of
# bench/all.sh (with OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set to n too).
#
#   torch_bench.py multi EPOCHS MAX_TRAIN MAX_TEST CONFIG [CONFIG ...]
#     CONFIG  ARCH,OPT,LR: ARCH big (MLP 784-256-128-10) | small (784-64-10),
#             OPT sgd (momentum 0.9) | adam (eps 1e-7), LR the learning rate
#     MAX_TRAIN, MAX_TEST  first rows of each split (0: all)
# trains the configurations one after the other (the PyTorch side of
# bench/whole_job.sh, the fit_multiple selection) for EPOCHS epochs each,
# batch 128, and prints per configuration "config <CONFIG> test_acc <a>
# train_s <s>", then "total_s <wall seconds, data loading excluded>".
# Needs Debian's python3-torch (scripts/install-bench-deps.sh).
import gzip
import os
import resource
import statistics
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
SEED = 42


def load_split(d, prefix):
    with gzip.open(os.path.join(d, prefix + "-images-idx3-ubyte.gz"), "rb") as f:
        img = f.read()
    with gzip.open(os.path.join(d, prefix + "-labels-idx1-ubyte.gz"), "rb") as f:
        lab = f.read()
    magic, n, h, w = struct.unpack(">IIII", img[:16])
    lmagic, ln = struct.unpack(">II", lab[:8])
    if magic != 0x803 or lmagic != 0x801 or n != ln or (h, w) != (28, 28):
        sys.exit("torch_bench: bad IDX file " + prefix)
    x = np.frombuffer(img, dtype=np.uint8, offset=16).reshape(n, 1, 28, 28)
    y = np.frombuffer(lab, dtype=np.uint8, offset=8)
    x = torch.from_numpy(x.astype(np.float32) / np.float32(255.0))
    y = torch.from_numpy(y.astype(np.int64))
    return x, y


class Block(nn.Module):
    """Conv-BN-ReLU, Conv-BN, plus the shortcut (a strided 1x1 Conv-BN), ReLU."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01)
        self.sc = None
        if stride != 1 or cin != cout:
            self.sc = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                    nn.BatchNorm2d(cout, eps=1e-3, momentum=0.01))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + (x if self.sc is None else self.sc(x)))


def make_net(name):
    if name == "resnet":
        net = nn.Sequential(nn.Conv2d(1, 16, 3, 1, 1, bias=False),
                            nn.BatchNorm2d(16, eps=1e-3, momentum=0.01), nn.ReLU(),
                            Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2),
                            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
        for mod in net.modules():
            if isinstance(mod, (nn.Linear, nn.Conv2d)):
                nn.init.xavier_uniform_(mod.weight)
                if mod.bias is not None:
                    nn.init.zeros_(mod.bias)
        return net
    if name == "mlp":
        net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                            nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    elif name == "cnn":
        net = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(),
                            nn.Linear(128, 10))
    else:
        sys.exit("torch_bench: unknown network " + name)
    for mod in net.modules():
        if isinstance(mod, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(mod.weight)
            nn.init.zeros_(mod.bias)
    return net


def train_flop_per_sample(name):
    # same rule as engine_bench.c: 2 FLOP per MAC, forward + weight
    # gradient + input gradient except for the first layer
    if name == "mlp":
        macs = [784 * 256, 256 * 128, 128 * 10]
    elif name == "resnet":
        # stem, block 1 (2 convs), block 2 (2 convs, 1x1 shortcut), block 3, dense
        macs = [32 * 32 * 16 * 9 * 1,
                32 * 32 * 16 * 9 * 16, 32 * 32 * 16 * 9 * 16,
                16 * 16 * 32 * 9 * 16, 16 * 16 * 32 * 16, 16 * 16 * 32 * 9 * 32,
                8 * 8 * 64 * 9 * 32, 8 * 8 * 64 * 32, 8 * 8 * 64 * 9 * 64,
                64 * 10]
    else:
        macs = [26 * 26 * 32 * 9 * 1, 11 * 11 * 64 * 9 * 32, 1600 * 128, 128 * 10]
    return sum(2.0 * m * (2 if i == 0 else 3) for i, m in enumerate(macs))


def sgemm_gflops(m, n, k):
    a = torch.rand(m, k)
    b = torch.rand(k, n)
    flop = 2.0 * m * n * k
    reps = int(2e9 / flop) + 1
    best = 0.0
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(reps):
            torch.mm(a, b)
        dt = time.process_time() - t0
        best = max(best, flop * reps / dt / 1e9)
    return best


def multi(argv):
    epochs, max_train, max_test = int(argv[0]), int(argv[1]), int(argv[2])
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "1")))
    d = os.environ.get("FASHION_DIR", "/usr/share/datasets/fashion-mnist")
    xtr, ytr = load_split(d, "train")
    xte, yte = load_split(d, "t10k")
    xtr, xte = xtr.reshape(-1, 784), xte.reshape(-1, 784)
    if max_train > 0:
        xtr, ytr = xtr[:max_train], ytr[:max_train]
    if max_test > 0:
        xte, yte = xte[:max_test], yte[:max_test]
    n = xtr.shape[0]
    loss_fn = nn.CrossEntropyLoss()
    t_all = time.perf_counter()
    for cfg in argv[3:]:
        arch, opt, lr = cfg.split(",")
        lr = float(lr)
        torch.manual_seed(int(os.environ.get("BENCH_SEED", SEED)))
        if arch == "big":
            net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                                nn.ReLU(), nn.Linear(128, 10))
        elif arch == "small":
            net = nn.Sequential(nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
        else:
            sys.exit("torch_bench: unknown architecture " + arch)
        for mod in net.modules():
            if isinstance(mod, nn.Linear):
                nn.init.xavier_uniform_(mod.weight)
                nn.init.zeros_(mod.bias)
        if opt == "sgd":
            o = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
        elif opt == "adam":
            o = torch.optim.Adam(net.parameters(), lr=lr, eps=1e-7)
        else:
            sys.exit("torch_bench: unknown optimizer " + opt)
        t0 = time.perf_counter()
        net.train()
        for _ in range(epochs):
            perm = torch.randperm(n)
            for start in range(0, n, BATCH):
                idx = perm[start:start + BATCH]
                o.zero_grad()
                loss = loss_fn(net(xtr[idx]), ytr[idx])
                loss.backward()
                o.step()
        net.eval()
        with torch.no_grad():
            acc = float((net(xte).argmax(1) == yte).float().mean())
        print("config %s test_acc %.4f train_s %.2f" % (cfg, acc, time.perf_counter() - t0),
              flush=True)
    print("total_s %.2f" % (time.perf_counter() - t_all))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "multi":
        if len(sys.argv) < 6:
            sys.exit("usage: torch_bench.py multi EPOCHS MAX_TRAIN MAX_TEST ARCH,OPT,LR ...")
        return multi(sys.argv[2:])
    if len(sys.argv) < 3:
        sys.exit("usage: torch_bench.py mlp|cnn|resnet sgd|adam [EPOCHS [WINDOWS_PER_EPOCH]]")
    name, opt = sys.argv[1], sys.argv[2]
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else (5 if name == "mlp" else 1)
    wpe = int(sys.argv[4]) if len(sys.argv) > 4 else (1 if name == "mlp" else 6)
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "1")))
    torch.manual_seed(int(os.environ.get("BENCH_SEED", SEED)))
    d = os.environ.get("FASHION_DIR", "/usr/share/datasets/fashion-mnist")
    xtr, ytr = load_split(d, "train")
    xte, yte = load_split(d, "t10k")
    if name == "mlp":
        xtr, xte = xtr.reshape(-1, 784), xte.reshape(-1, 784)
    if name == "resnet":
        xtr, xte = F.pad(xtr, (2, 2, 2, 2)), F.pad(xte, (2, 2, 2, 2))
    n_train = int(os.environ.get("BENCH_TRAIN_N", "0"))
    if BATCH <= n_train < xtr.shape[0]:
        xtr, ytr = xtr[:n_train], ytr[:n_train]
    net = make_net(name)
    if opt == "sgd":
        o = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    elif opt == "adam":
        o = torch.optim.Adam(net.parameters(), lr=0.001, eps=1e-7)
    else:
        sys.exit("torch_bench: unknown optimizer " + opt)
    loss_fn = nn.CrossEntropyLoss()

    sg = {"1024sq": sgemm_gflops(1024, 1024, 1024),
          "128x784x256": sgemm_gflops(128, 256, 784)}

    n = xtr.shape[0]
    full = n // BATCH
    per = full // wpe
    rates, crates = [], []
    for e in range(epochs):
        t0 = time.perf_counter()
        perm = torch.randperm(n)
        tw, tc = [], []
        loss_sum, seen = 0.0, 0
        net.train()
        for bi, start in enumerate(range(0, n, BATCH)):
            tw.append(time.perf_counter())
            tc.append(time.process_time())
            idx = perm[start:start + BATCH]
            xb, yb = xtr[idx], ytr[idx]
            o.zero_grad()
            loss = loss_fn(net(xb), yb)
            loss.backward()
            o.step()
            loss_sum += loss.item() * len(idx)
            seen += len(idx)
        tw.append(time.perf_counter())
        tc.append(time.process_time())
        print("epoch_s_%d %.3f" % (e + 1, time.perf_counter() - t0))
        print("train_loss_%d %.4f" % (e + 1, loss_sum / seen))
        if (e == 0 and epochs > 1) or per < 1:
            continue
        for w in range(1 if e == 0 else 0, wpe):
            b0, b1 = w * per, w * per + per
            rates.append((b1 - b0) * BATCH / (tw[b1] - tw[b0]))
            crates.append((b1 - b0) * BATCH / (tc[b1] - tc[b0]))
    sps = statistics.median(rates)
    cps = statistics.median(crates)

    net.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, xte.shape[0], 1000):
            pred = net(xte[start:start + 1000]).argmax(1)
            correct += int((pred == yte[start:start + 1000]).sum())
    acc = correct / xte.shape[0]
    flop = train_flop_per_sample(name)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    print("net %s\nopt %s\nepochs %d\ntiming_windows %d" % (name, opt, epochs, len(rates)))
    print("torch_version %s" % torch.__version__)
    print("flop_per_sample %.0f" % flop)
    print("samples_per_s %.0f" % sps)
    print("samples_per_cpu_s %.0f" % cps)
    print("gflops %.2f" % (sps * flop / 1e9))
    print("gflops_cpu %.2f" % (cps * flop / 1e9))
    for k, v in sg.items():
        print("sgemm_gflops_%s %.2f" % (k, v))
    print("pct_sgemm %.1f" % (100.0 * sps * flop / 1e9 / sg["1024sq"]))
    print("pct_sgemm_cpu %.1f" % (100.0 * cps * flop / 1e9 / sg["1024sq"]))
    print("peak_rss_mb %.1f" % rss)
    print("test_acc %.4f" % acc)


if __name__ == "__main__":
    main()
