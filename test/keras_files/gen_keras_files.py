#!/usr/bin/python3
# gen_keras_files.py: writes test/data/keras_files.sql, the Keras model
# files that sql/77_keras_file.sql and test/unit/test_keras_file.c load.
#
# No Keras runs here: the files are written with h5py, zipfile and numpy
# to the layouts Keras itself writes (docs/interchange.md, "Keras files"):
#
#   .keras (Keras 3; Keras 2.13+ "v3")   a zip of config.json (the model's
#       Keras 3 config: module, registered_name, batch_shape, DTypePolicy),
#       metadata.json and model.weights.h5, whose datasets are
#       layers/<layer>/vars/<i> (an LSTM's under layers/<lstm>/cell/vars;
#       Keras 2.13 to 2.15: _layer_checkpoint_dependencies/<layer>/vars/<i>),
#       plus the optimizer's own vars, which a loader skips
#   .h5 (model.save('m.h5'), Keras 2)   root attributes model_config (the
#       JSON), keras_version and backend as fixed-length byte strings;
#       group model_weights with attribute layer_names (fixed-length bytes
#       array, as Keras 2 writes it), each layer's group with attribute
#       weight_names ("dense/kernel:0", ...; an empty float64 array for a
#       layer without weights, as np.asarray([]) gives) naming datasets
#       under that group
#
# Per model <m> in mlp, cnn, lstm: \set <m>_keras, <m>_h5 (the files as
# bytea hex), <m>_arch (the Keras 3 config.json), <m>_h5arch (the .h5's
# model_config), <m>_weights (the same weights, flat float32 in Keras
# get_weights() order, for load_keras_model), <m>_data (a few inputs);
# mlp_k213 (the MLP in the Keras 2.13 layout); and the hostile files:
# bad_truncated, bad_garbage, bad_noconfig, bad_missing (a tensor left
# out), bad_shape (a kernel of the wrong shape), bad_bomb (an entry whose
# stored size is over the limit), bad_int (an integer dataset),
# bad_f64 (float64 weights, accepted and converted), bad_emptyh5 (a
# .keras whose model.weights.h5 is empty); nested_h5 and nested_keras:
# the transfer-learning pattern Sequential([base, Dense]), base a
# functional model, as Keras 2's model.save('m.h5') writes it (the inner
# model's weights under model_weights/base/dense/kernel:0, base's
# weight_names "dense/kernel:0", ...) and as Keras 3's .keras does
# (layers/base/layers/dense/vars/0): madlib_dl inlines the nested model
# (its tensors named by the inner layer, dense); nested_data and
# nested_pred: inputs of it and its probabilities computed by numpy.
#
#   /usr/bin/python3 test/keras_files/gen_keras_files.py > test/data/keras_files.sql
import io
import json
import sys
import zipfile

import h5py
import numpy as np

rng = np.random.default_rng(29)
F32 = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}


def k3_layer(cls, name, **cfg):
    c = {"name": name, "trainable": True, "dtype": F32}
    c.update(cfg)
    return {"module": "keras.layers", "class_name": cls, "config": c, "registered_name": None}


def k3_model(name, input_shape, layers, input_dtype="float32"):
    inp = {"module": "keras.layers", "class_name": "InputLayer",
           "config": {"batch_shape": [None] + input_shape, "dtype": input_dtype, "sparse": False,
                      "name": "input_layer"}, "registered_name": None}
    return {"module": "keras", "class_name": "Sequential",
            "config": {"name": name, "trainable": True, "dtype": F32, "layers": [inp] + layers},
            "registered_name": None, "build_config": {"input_shape": [None] + input_shape}}


def k2_model(name, input_shape, layers, input_dtype="float32"):
    """The Keras 2 (model.to_json()) form of the same model."""
    out = [{"class_name": "InputLayer", "config": {"batch_input_shape": [None] + input_shape,
                                                   "dtype": input_dtype, "sparse": False, "ragged": False,
                                                   "name": name + "_input"}}]
    for l in layers:
        c = dict(l["config"])
        c["dtype"] = "float32"
        out.append({"class_name": l["class_name"], "config": c})
    return {"class_name": "Sequential", "config": {"name": name, "layers": out}}


def w(*shape):
    return (rng.standard_normal(shape) * 0.3).astype(np.float32)


def dense(name, units, act):
    return k3_layer("Dense", name, units=units, activation=act, use_bias=True)


# each model: (config layers, input shape, input dtype, [(layer, [(weight name, array)], sub-object)])
def mlp():
    layers = [dense("dense", 8, "relu"), dense("dense_1", 3, "softmax")]
    weights = [("dense", [("kernel", w(4, 8)), ("bias", w(8))], None),
               ("dense_1", [("kernel", w(8, 3)), ("bias", w(3))], None)]
    return layers, [4], "float32", weights


def cnn():
    layers = [k3_layer("Conv2D", "conv2d", filters=4, kernel_size=[3, 3], strides=[1, 1], padding="valid",
                       data_format="channels_last", dilation_rate=[1, 1], groups=1, activation="relu",
                       use_bias=True),
              k3_layer("BatchNormalization", "batch_normalization", axis=-1, momentum=0.99, epsilon=0.001,
                       center=True, scale=True),
              k3_layer("MaxPooling2D", "max_pooling2d", pool_size=[2, 2], padding="valid", strides=[2, 2],
                       data_format="channels_last"),
              k3_layer("Flatten", "flatten", data_format="channels_last"),
              dense("dense", 3, "softmax")]
    var = np.abs(w(4)) + 0.5
    weights = [("conv2d", [("kernel", w(3, 3, 1, 4)), ("bias", w(4))], None),
               ("batch_normalization", [("gamma", w(4) + 1), ("beta", w(4)), ("moving_mean", w(4)),
                                        ("moving_variance", var)], None),
               ("max_pooling2d", [], None), ("flatten", [], None),
               ("dense", [("kernel", w(36, 3)), ("bias", w(3))], None)]
    return layers, [8, 8, 1], "float32", weights


def lstm():
    layers = [k3_layer("Embedding", "embedding", input_dim=20, output_dim=4),
              k3_layer("LSTM", "lstm", units=5, activation="tanh", recurrent_activation="sigmoid",
                       use_bias=True, return_sequences=False, return_state=False, go_backwards=False,
                       stateful=False, unroll=False),
              dense("dense", 2, "softmax")]
    weights = [("embedding", [("embeddings", w(20, 4))], None),
               ("lstm", [("kernel", w(4, 20)), ("recurrent_kernel", w(5, 20)), ("bias", w(20))], "cell"),
               ("dense", [("kernel", w(5, 2)), ("bias", w(2))], None)]
    return layers, [6], "int32", weights


def k3_weights_h5(weights, top="layers", drop=None, reshape=None, dtype=None, int_var=False):
    """model.weights.h5 as Keras 3 (top="layers") or 2.13 writes it."""
    b = io.BytesIO()
    with h5py.File(b, "w") as f:
        lg = f.create_group(top)
        f.create_group(top + "/input_layer/vars") if top == "layers" else None
        for layer, ws, sub in weights:
            g = lg.create_group(layer)
            own = g.create_group("vars")
            vg = g.create_group(sub).create_group("vars") if sub else own
            for i, (wn, a) in enumerate(ws):
                if (layer, wn) == drop:
                    continue
                if (layer, wn) == reshape:
                    a = np.zeros(a.shape[:-1] + (a.shape[-1] + 1,), np.float32)
                vg.create_dataset(str(i), data=a.astype(dtype) if dtype else a)
            if int_var and ws:
                vg[str(len(ws))] = np.arange(3, dtype=np.int64)
        opt = f.create_group("optimizer").create_group("vars")
        opt.create_dataset("0", data=np.array(7, dtype=np.int64))  # iterations: skipped
        f.create_group("vars")
    return b.getvalue()


def keras_zip(config, h5, noconfig=False, bomb=False):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z0:
        class Z:  # entries with a fixed date, so the output is reproducible
            def writestr(self, name, data):
                z0.writestr(zipfile.ZipInfo(name, (2026, 12, 3, 12, 0, 0)), data, zipfile.ZIP_DEFLATED)
        z = Z()
        z.writestr("metadata.json", json.dumps({"keras_version": "3.3.3", "date_saved": "2026-12-03@12:00:00"}))
        if not noconfig:
            z.writestr("config.json", json.dumps(config))
        if bomb:
            # 2 GiB of zeros would deflate to ~2 MB; a 1 MB-uncompressed
            # stored size over the test's lowered limit shows the check
            z.writestr("model.weights.h5", b"\0" * (1 << 20))
        else:
            z.writestr("model.weights.h5", h5)
    return b.getvalue()


def h5_model_file(f, config):
    """The file attributes of Keras 2's model.save('m.h5'); its model_weights group."""
    f.attrs["keras_version"] = np.bytes_(b"2.12.0")
    f.attrs["backend"] = np.bytes_(b"tensorflow")
    f.attrs["model_config"] = np.bytes_(json.dumps(config).encode("utf8"))
    return f.create_group("model_weights")


def legacy_h5(config, weights):
    b = io.BytesIO()
    with h5py.File(b, "w") as f:
        mw = h5_model_file(f, config)
        mw.attrs["backend"] = np.bytes_(b"tensorflow")
        mw.attrs["keras_version"] = np.bytes_(b"2.12.0")
        mw.attrs["layer_names"] = np.array([l.encode("utf8") for l, _, _ in weights])
        for layer, ws, sub in weights:
            g = mw.create_group(layer)
            prefix = layer + "/" + (layer + "_cell/" if sub else "")
            names = [(prefix + wn + ":0").encode("utf8") for wn, _ in ws]
            g.attrs["weight_names"] = np.array(names) if names else np.asarray([])
            for n, (_, a) in zip(names, ws):
                g.create_dataset(n.decode(), data=a)
    return b.getvalue()


def nested_h5(config, base, base_weights, head, head_weights):
    """Keras 2's model.save('m.h5') of Sequential([base, head]), base a model."""
    b = io.BytesIO()
    with h5py.File(b, "w") as f:
        mw = h5_model_file(f, config)
        mw.attrs["layer_names"] = np.array([base.encode(), head.encode()])
        g = mw.create_group(base)
        names = [(l + "/" + wn + ":0").encode() for l, ws in base_weights for wn, _ in ws]
        g.attrs["weight_names"] = np.array(names)
        for n, a in zip(names, [a for _, ws in base_weights for _, a in ws]):
            g.create_dataset(n.decode(), data=a)
        g = mw.create_group(head)
        names = [(head + "/" + wn + ":0").encode() for wn, _ in head_weights]
        g.attrs["weight_names"] = np.array(names)
        for n, (_, a) in zip(names, head_weights):
            g.create_dataset(n.decode(), data=a)
    return b.getvalue()


def nested_keras_h5(base, base_weights, head, head_weights):
    """Keras 3's model.weights.h5 of the same model: the inner model's layers under its own."""
    b = io.BytesIO()
    with h5py.File(b, "w") as f:
        inner = f.create_group("layers/" + base + "/layers")
        for l, ws in base_weights:
            vg = inner.create_group(l + "/vars")
            for i, (_, a) in enumerate(ws):
                vg.create_dataset(str(i), data=a)
        vg = f.create_group("layers/" + head + "/vars")
        for i, (_, a) in enumerate(head_weights):
            vg.create_dataset(str(i), data=a)
        f.create_group("optimizer/vars")
    return b.getvalue()


def flat(weights):
    return b"".join(a.astype("<f4").tobytes() for _, ws, _ in weights for _, a in ws)


def sset(name, value):
    print("\\set %s '%s'" % (name, value.replace("'", "''")))


def bset(name, data):
    print("\\set %s '\\\\x%s'" % (name, data.hex()))


print("-- keras_files.sql: made by test/keras_files/gen_keras_files.py (h5py %s, numpy %s), "
      "written to Keras' file layouts, not by Keras; do not edit." % (h5py.version.version, np.__version__))
models = {"mlp": mlp(), "cnn": cnn(), "lstm": lstm()}
for m, (layers, shape, dt, weights) in models.items():
    cfg = k3_model("sequential", shape, layers, dt)
    cfg2 = k2_model("sequential", shape, layers, dt)
    bset(m + "_keras", keras_zip(cfg, k3_weights_h5(weights)))
    bset(m + "_h5", legacy_h5(cfg2, weights))
    sset(m + "_arch", json.dumps(cfg))
    sset(m + "_h5arch", json.dumps(cfg2))
    bset(m + "_weights", flat(weights))
    if dt == "int32":
        data = rng.integers(0, 20, size=(3,) + tuple(shape)).astype(float)
    else:
        data = rng.standard_normal((3,) + tuple(shape))
    sset(m + "_data", json.dumps([[round(float(v), 4) for v in r.ravel()] for r in data]))

layers, shape, dt, weights = models["mlp"]
cfg = k3_model("sequential", shape, layers, dt)
bset("mlp_k213_keras", keras_zip(cfg, k3_weights_h5(weights, top="_layer_checkpoint_dependencies")))
good = keras_zip(cfg, k3_weights_h5(weights))
bset("bad_truncated", good[: len(good) // 2])
bset("bad_garbage", b"PK\x03\x04" + bytes(rng.integers(0, 256, 300, dtype=np.uint8)))
bset("bad_h5garbage", b"\x89HDF\r\n\x1a\n" + bytes(rng.integers(0, 256, 300, dtype=np.uint8)))
h5 = legacy_h5(k2_model("sequential", shape, layers, dt), weights)
bset("bad_h5truncated", h5[: len(h5) * 2 // 3])
bset("bad_noconfig", keras_zip(cfg, k3_weights_h5(weights), noconfig=True))
bset("bad_missing", keras_zip(cfg, k3_weights_h5(weights, drop=("dense_1", "bias"))))
bset("bad_shape", keras_zip(cfg, k3_weights_h5(weights, reshape=("dense", "kernel"))))
bset("bad_bomb", keras_zip(cfg, b"", bomb=True))
bset("bad_int", keras_zip(cfg, k3_weights_h5(weights, int_var=True)))
bset("mlp_f64_keras", keras_zip(cfg, k3_weights_h5(weights, dtype=np.float64)))
bset("mlp_f16_keras", keras_zip(cfg, k3_weights_h5(weights, dtype=np.float16)))
bset("bad_emptyh5", keras_zip(cfg, b""))

# nested: Sequential([base, Dense(3)]), base = a functional Dense(8) on 4 inputs
base_w = [("dense", [("kernel", w(4, 8)), ("bias", w(8))])]
head_w = [("kernel", w(8, 3)), ("bias", w(3))]
base2 = {"class_name": "Functional", "config": {
    "name": "base", "trainable": True,
    "layers": [{"class_name": "InputLayer", "name": "input_1", "inbound_nodes": [],
                "config": {"batch_input_shape": [None, 4], "dtype": "float32", "sparse": False,
                           "ragged": False, "name": "input_1"}},
               {"class_name": "Dense", "name": "dense", "inbound_nodes": [[["input_1", 0, 0, {}]]],
                "config": {"name": "dense", "trainable": True, "dtype": "float32", "units": 8,
                           "activation": "relu", "use_bias": True}}],
    "input_layers": [["input_1", 0, 0]], "output_layers": [["dense", 0, 0]]}}
nested2 = {"class_name": "Sequential", "config": {"name": "sequential", "layers": [
    {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 4], "dtype": "float32",
                                            "sparse": False, "ragged": False, "name": "base_input"}},
    base2,
    {"class_name": "Dense", "config": {"name": "dense_1", "trainable": True, "dtype": "float32",
                                       "units": 3, "activation": "softmax", "use_bias": True}}]}}
bset("nested_h5", nested_h5(nested2, "base", base_w, "dense_1", head_w))
base3 = {"module": "keras", "class_name": "Functional", "registered_name": "Functional", "config": {
    "name": "base", "trainable": True,
    "layers": [{"module": "keras.layers", "class_name": "InputLayer", "registered_name": None, "name": "input_layer",
                "inbound_nodes": [], "config": {"batch_shape": [None, 4], "dtype": "float32", "sparse": False,
                                                "name": "input_layer"}},
               dict(k3_layer("Dense", "dense", units=8, activation="relu", use_bias=True), name="dense",
                    inbound_nodes=[{"args": [{"class_name": "__keras_tensor__",
                                              "config": {"shape": [None, 4], "dtype": "float32",
                                                         "keras_history": ["input_layer", 0, 0]}}],
                                    "kwargs": {}}])],
    "input_layers": [["input_layer", 0, 0]], "output_layers": [["dense", 0, 0]]}}
nested3 = k3_model("sequential", [4], [base3, dense("dense_1", 3, "softmax")])
bset("nested_keras", keras_zip(nested3, nested_keras_h5("base", base_w, "dense_1", head_w)))

# the nested model's inputs and its outputs by numpy (the model inlined:
# relu(x W + b) of base's dense, then softmax of dense_1)
nx = rng.standard_normal((3, 4)).round(4)
nh = np.maximum(nx @ base_w[0][1][0][1].astype(np.float64) + base_w[0][1][1][1], 0)
nz = nh @ head_w[0][1].astype(np.float64) + head_w[1][1]
nz = np.exp(nz - nz.max(axis=1, keepdims=True))
sset("nested_data", json.dumps([[float(v) for v in r] for r in nx]))
sset("nested_pred", json.dumps([[round(float(v), 6) for v in r] for r in nz / nz.sum(axis=1, keepdims=True)]))
