#!/usr/bin/python3
# gen_torch.py: PyTorch models exported to ONNX, for load_onnx_model's
# tests (sql/76_onnx.sql) and the interchange step of scripts/test.sh.
#
# Eight small models, each built with Debian's python3-torch, trained for a
# few full-batch steps (so the weights are not an initializer's), exported
# with torch.onnx.export (opset 17, a dynamic batch dimension) and run by
# PyTorch on fixed inputs:
#   mlp       Linear-ReLU-Linear-Softmax            input (N, 4)
#   cnn       Conv-ReLU-BatchNorm-MaxPool-Conv-ReLU-Flatten-Linear-Softmax
#             (BatchNorm after the ReLU: torch.onnx folds one that follows a Conv)
#                                                   input (N, 1, 8, 8) NCHW
#   resblock  Conv-BN-ReLU-Conv-BN (folded into the Convs) + 1x1 Conv skip, ReLU, global average
#             pooling, Linear-Softmax               input (N, 2, 6, 6) NCHW
#   lstm      Embedding-LSTM-Linear on the last hidden state, Softmax
#                                                   input (N, 7) token ids
#   twoin     two inputs, a Linear each, Concat, Linear-Softmax
#                                                   inputs (N, 3), (N, 5)
#   bilstm    Embedding, bidirectional LSTM, cat(h[-2], h[-1]), Linear-Softmax
#                                                   input (N, 7) token ids
#   gelu      Linear-GELU-Linear-Softmax (GELU as opset 17 writes it: Div, Erf,
#             Add, Mul, Mul)                        input (N, 4)
#   textcnn   Embedding, transpose, Conv1d-ReLU-BatchNorm1d-MaxPool1d,
#             x.view(x.size(0), -1), LayerNorm, Linear-Softmax
#                                                   input (N, 10) token ids
# Writes test/data/onnx_torch.sql: per model a psql variable with the
# .onnx bytes (hex), a table <name>_data (id, x real[] [, x2 real[]]) and
# a table <name>_torch (id, prob real[]) of PyTorch's outputs.
#
# and, into test/unit/fixtures/, onnx_<name>.onnx with onnx_<name>.json
# (inputs with their ONNX names, shapes and types, PyTorch's outputs) for
# test/unit/test_onnx.c and ONNX Runtime (test/interchange/ort_check.js).
#
# Run: /usr/bin/python3 test/interchange/gen_torch.py test/data/onnx_torch.sql test/unit/fixtures
# (python3-torch and python3-onnx: scripts/install-deps.sh).  The
# generator seeds torch, so the file is the same on every run of the same
# torch build.
import io
import sys

import torch
import torch.nn as nn

torch.manual_seed(20261202)
torch.set_num_threads(1)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=1))

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(4), nn.MaxPool2d(2),
            nn.Conv2d(4, 6, 3), nn.ReLU(), nn.Flatten(), nn.Linear(6 * 2 * 2, 3), nn.Softmax(dim=1))

    def forward(self, x):
        return self.net(x)


class ResBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(2, 4, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(4)
        self.c2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(4)
        self.skip = nn.Conv2d(2, 4, 1)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        y = torch.relu(y + self.skip(x))
        y = nn.functional.adaptive_avg_pool2d(y, 1)
        return torch.softmax(self.fc(torch.flatten(y, 1)), dim=1)


class TextLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 6)
        self.lstm = nn.LSTM(6, 5, batch_first=True)
        self.fc = nn.Linear(5, 2)

    def forward(self, ids):
        _, (h, _) = self.lstm(self.emb(ids))
        return torch.softmax(self.fc(h[-1]), dim=1)


class TextCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 8)
        self.conv = nn.Conv1d(8, 6, 3, padding=1)
        self.bn = nn.BatchNorm1d(6)
        self.pool = nn.MaxPool1d(2)
        self.norm = nn.LayerNorm(30)
        self.fc = nn.Linear(30, 3)

    def forward(self, ids):
        y = self.emb(ids).transpose(1, 2)
        y = self.pool(self.bn(torch.relu(self.conv(y))))
        y = self.norm(y.view(y.size(0), -1))
        return torch.softmax(self.fc(y), dim=1)


class BiLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 5)
        self.lstm = nn.LSTM(5, 4, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(8, 2)

    def forward(self, ids):
        _, (h, _) = self.lstm(self.emb(ids))
        return torch.softmax(self.fc(torch.cat((h[-2], h[-1]), dim=1)), dim=1)


class GeluMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 6), nn.GELU(), nn.Linear(6, 3), nn.Softmax(dim=1))

    def forward(self, x):
        return self.net(x)


class TwoIn(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 4)
        self.b = nn.Linear(5, 4)
        self.head = nn.Linear(8, 3)

    def forward(self, x1, x2):
        z = torch.cat([torch.tanh(self.a(x1)), torch.sigmoid(self.b(x2))], dim=1)
        return torch.softmax(self.head(z), dim=1)


N = 6


def data(name):
    if name in ('mlp', 'gelu'):
        return [torch.randn(N, 4)]
    if name == 'cnn':
        return [torch.randn(N, 1, 8, 8)]
    if name == 'resblock':
        return [torch.randn(N, 2, 6, 6)]
    if name in ('lstm', 'bilstm'):
        return [torch.randint(0, 20, (N, 7))]
    if name == 'textcnn':
        return [torch.randint(0, 30, (N, 10))]
    return [torch.randn(N, 3), torch.randn(N, 5)]


def train(model, xs, classes):
    y = torch.randint(0, classes, (N,))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model.train()
    for _ in range(5):
        opt.zero_grad()
        out = model(*xs)
        loss = nn.functional.nll_loss(torch.log(out + 1e-7), y)
        loss.backward()
        opt.step()
    model.eval()


def arr(t):
    t = t.detach()
    if t.dim() == 0:
        return repr(float(t))
    return '{' + ','.join(arr(s) for s in t) + '}'


def flt(t):
    return '{' + ','.join('%.9g' % v for v in t.detach().flatten().tolist()) + '}' if t.dim() <= 1 else \
        '{' + ','.join(flt(s) for s in t) + '}'


def main(out_path, fixture_dir):
    models = [('mlp', MLP(), 3), ('cnn', CNN(), 3), ('resblock', ResBlock(), 3),
              ('lstm', TextLSTM(), 2), ('twoin', TwoIn(), 3), ('textcnn', TextCNN(), 3),
              ('bilstm', None, 2), ('gelu', None, 3)]   # made in their turn: the earlier models' draws stay
    lines = ['-- onnx_torch.sql: made by test/interchange/gen_torch.py (PyTorch %s,'
             ' torch.onnx.export opset 17); do not edit.' % torch.__version__,
             '-- Per model: :<name>_onnx (the .onnx bytes), <name>_data (inputs as the',
             '-- ONNX model takes them: NCHW for the CNNs, token ids for lstm),',
             "-- <name>_torch (PyTorch's softmax outputs)."]
    for name, model, classes in models:
        if model is None:
            model = BiLSTM() if name == 'bilstm' else GeluMLP()
        xs = data(name)
        train(model, xs, classes)
        with torch.no_grad():
            probs = model(*xs)
        in_names = ['x'] if len(xs) == 1 else ['x', 'x2']
        buf = io.BytesIO()
        torch.onnx.export(model, tuple(xs), buf, opset_version=17, input_names=in_names,
                          output_names=['prob'],
                          dynamic_axes={**{n: {0: 'N'} for n in in_names}, 'prob': {0: 'N'}})
        b = buf.getvalue()
        if fixture_dir:
            import json
            with open('%s/onnx_%s.onnx' % (fixture_dir, name), 'wb') as f:
                f.write(b)
            spec = {'inputs': [{'name': n, 'shape': list(x.shape),
                                'dtype': 'int64' if x.dtype == torch.int64 else 'float32',
                                'data': [float(v) for v in x.flatten().tolist()]}
                               for n, x in zip(in_names, xs)],
                    'outputs': [{'name': 'prob', 'data': [float('%.9g' % v) for v in probs.flatten().tolist()]}]}
            with open('%s/onnx_%s.json' % (fixture_dir, name), 'w') as f:
                json.dump(spec, f)
                f.write('\n')
        lines.append("\\set %s_onnx '\\\\x%s'" % (name, b.hex()))
        cols = ', '.join('%s real[]' % n for n in in_names)
        lines.append('CREATE TABLE %s_data (id integer, %s);' % (name, cols))
        lines.append('INSERT INTO %s_data VALUES' % name)
        rows = []
        for i in range(N):
            vals = ', '.join("'%s'" % flt(x[i].float()) for x in xs)
            rows.append('    (%d, %s)' % (i + 1, vals))
        lines.append(',\n'.join(rows) + ';')
        lines.append('CREATE TABLE %s_torch (id integer, prob real[]);' % name)
        lines.append('INSERT INTO %s_torch VALUES' % name)
        lines.append(',\n'.join("    (%d, '%s')" % (i + 1, flt(probs[i])) for i in range(N)) + ';')
        print('%s: %d bytes of ONNX' % (name, len(b)), file=sys.stderr)
    lines.append('-- hostile files: an unsupported operator, a cycle, a 2 GB tensor declared in')
    lines.append('-- under 1 kB (made with onnx.helper)')
    for name, b in hostile():
        lines.append("\\set %s '\\\\x%s'" % (name, b.hex()))
        if fixture_dir:
            import os
            d = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fuzz', 'corpus', 'fuzz_onnx')
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, name + '.onnx'), 'wb') as f:
                f.write(b)
    with open(out_path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def hostile():
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 4])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 4])
    out = []
    g = helper.make_graph([helper.make_node('Sin', ['x'], ['y'], name='sin_1')], 'unsupported', [x], [y])
    out.append(('hostile_unsupported', helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])))
    g = helper.make_graph([helper.make_node('Relu', ['b'], ['a'], name='loop_a'),
                           helper.make_node('Relu', ['a'], ['b'], name='loop_b'),
                           helper.make_node('Add', ['x', 'b'], ['y'], name='out')], 'cycle', [x], [y])
    out.append(('hostile_cycle', helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])))
    w = TensorProto()
    w.name = 'w'
    w.data_type = TensorProto.FLOAT
    w.dims.extend([1 << 16, 1 << 13])   # 2^29 floats: 2 GiB
    w.raw_data = bytes(16)
    g = helper.make_graph([helper.make_node('MatMul', ['x', 'w'], ['y'], name='big')], 'big', [x], [y], [w])
    out.append(('hostile_bigtensor', helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])))
    return [(n, m.SerializeToString()) for n, m in out]


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'test/data/onnx_torch.sql',
         sys.argv[2] if len(sys.argv) > 2 else None)
