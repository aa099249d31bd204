#!/usr/bin/env bash
# load_fashion_mnist.sh: load Fashion-MNIST into two tables.
#
#   scripts/load_fashion_mnist.sh [--replace] [--image] CONNINFO [MAX_TRAIN [MAX_TEST]]
#
# Reads the IDX files of Debian's dataset-fashion-mnist package
# (/usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz;
# another folder with FASHION_MNIST_DIR) and creates
#
#   fashion_train (id integer PRIMARY KEY, x real[], y integer)   60,000 rows
#   fashion_test  (id integer PRIMARY KEY, x real[], y integer)   10,000 rows
#
# id is 1..N in file order, x the 784 raw pixel values 0..255 (row-major
# 28x28, one-dimensional), y the class 0..9 (0 T-shirt/top, 1 Trouser,
# 2 Pullover, 3 Dress, 4 Coat, 5 Sandal, 6 Shirt, 7 Sneaker, 8 Bag,
# 9 Ankle boot).  MAX_TRAIN / MAX_TEST load only the first rows.  With
# --image, x is the image as real[28][28][1] (rows, columns, one channel),
# the input shape of a Conv2D model; the values are the same.
#
# CONNINFO is anything psql -d takes ("dbname=demo", a URI, a database
# name).  Table names: FASHION_TRAIN_TABLE and FASHION_TEST_TABLE (name or
# schema.name of letters, digits and _).  An existing table is an
# error unless --replace is given.  Each table is created, filled (binary
# COPY FREEZE) and indexed in one transaction, so it appears complete or
# not at all.  Needs psql and python3 (standard library only; PYTHON
# names another interpreter).
set -euo pipefail

usage() {
  echo "usage: $0 [--replace] [--image] CONNINFO [MAX_TRAIN [MAX_TEST]]" >&2
  exit 2
}

REPLACE=0
IMAGE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --replace) REPLACE=1; shift ;;
    --image) IMAGE=1; shift ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] && [ $# -le 3 ] || usage
CONN="$1"
MAX_TRAIN="${2:-}"
MAX_TEST="${3:-}"
for v in "$MAX_TRAIN" "$MAX_TEST"; do
  [ -z "$v" ] || [[ "$v" =~ ^[0-9]+$ ]] || { echo "$0: MAX_TRAIN and MAX_TEST must be non-negative integers" >&2; exit 2; }
done
DIR="${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}"
# Debian's python3 (scripts/install-deps.sh) unless PYTHON says otherwise.
if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
TRAIN_TABLE="${FASHION_TRAIN_TABLE:-fashion_train}"
TEST_TABLE="${FASHION_TEST_TABLE:-fashion_test}"

for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz \
         t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  [ -r "$DIR/$f" ] || {
    echo "$0: $DIR/$f not found; install the Debian package dataset-fashion-mnist" \
         "(scripts/install-deps.sh) or set FASHION_MNIST_DIR" >&2
    exit 1
  }
done

# Writes PostgreSQL binary COPY data (id int4, x float4[], y int4) for an
# IDX image file and its label file to stdout.
read -r -d '' IDX2COPY <<'PY' || true
import gzip, struct, sys

images, labels, limit, image = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"

def open_idx(path, magic, what):
    f = gzip.open(path, "rb")
    head = f.read(4)
    if len(head) != 4 or struct.unpack(">I", head)[0] != magic:
        sys.exit("%s: not an IDX %s file (magic 0x%08x expected)" % (path, what, magic))
    return f

fi = open_idx(images, 0x00000803, "image")
n, rows, cols = struct.unpack(">III", fi.read(12))
fl = open_idx(labels, 0x00000801, "label")
(nl,) = struct.unpack(">I", fl.read(4))
if nl != n:
    sys.exit("%s has %d images but %s has %d labels" % (images, n, labels, nl))
if limit:
    n = min(n, int(limit))
size = rows * cols
ys = fl.read(n)
if len(ys) != n:
    sys.exit("%s: truncated" % labels)

FLOAT4OID = 700
# Each element: int32 length 4, then the float4 big-endian.
elem = [struct.pack(">i", 4) + struct.pack(">f", float(v)) for v in range(256)]
if image:   # ndim, hasnull, elemtype, then (dim, lbound) per dimension
    array_head = struct.pack(">iiiiiiiii", 3, 0, FLOAT4OID, rows, 1, cols, 1, 1, 1)
else:
    array_head = struct.pack(">iiiii", 1, 0, FLOAT4OID, size, 1)
x_len = struct.pack(">i", len(array_head) + 8 * size)

out = sys.stdout.buffer
try:
    out.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
    chunk = []
    for i in range(n):
        img = fi.read(size)
        if len(img) != size:
            sys.exit("%s: truncated at image %d" % (images, i))
        chunk.append(struct.pack(">hii", 3, 4, i + 1))
        chunk.append(x_len)
        chunk.append(array_head)
        chunk.append(b"".join(map(elem.__getitem__, img)))
        chunk.append(struct.pack(">ii", 4, ys[i]))
        if len(chunk) >= 5000:
            out.write(b"".join(chunk))
            chunk = []
    out.write(b"".join(chunk))
    out.write(struct.pack(">h", -1))
    out.flush()
except BrokenPipeError:
    sys.exit(1)  # psql stopped reading: it reports the error
PY

load() {
  local table="$1" images="$2" labels="$3" limit="$4"
  local drop=""
  if [ "$REPLACE" -eq 1 ]; then
    drop="DROP TABLE IF EXISTS $table;"
  elif [ "$(psql -X -q -At -v ON_ERROR_STOP=1 -d "$CONN" \
            -c "SELECT to_regclass('$table') IS NOT NULL")" = "t" ]; then
    echo "$0: table $table already exists; drop it or give --replace" >&2
    exit 1
  fi
  "$PYTHON" -c "$IDX2COPY" "$images" "$labels" "$limit" "$IMAGE" |
    psql -X -q -1 -v ON_ERROR_STOP=1 -d "$CONN" \
      -c "$drop CREATE TABLE $table (id integer, x real[], y integer)" \
      -c "COPY $table (id, x, y) FROM STDIN (FORMAT binary, FREEZE)" \
      -c "ALTER TABLE $table ADD PRIMARY KEY (id)" \
      -c "ANALYZE $table"
  psql -X -q -At -v ON_ERROR_STOP=1 -d "$CONN" \
    -c "SELECT format('%s: %s rows', '$table', count(*)) FROM $table"
}

# Table names go into SQL: allow only (schema.)identifier characters.
for t in "$TRAIN_TABLE" "$TEST_TABLE"; do
  [[ "$t" =~ ^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$ ]] || {
    echo "$0: table name '$t' must be name or schema.name of letters, digits and _" >&2
    exit 2
  }
done

start=$(date +%s.%N)
load "$TRAIN_TABLE" "$DIR/train-images-idx3-ubyte.gz" "$DIR/train-labels-idx1-ubyte.gz" "$MAX_TRAIN"
load "$TEST_TABLE" "$DIR/t10k-images-idx3-ubyte.gz" "$DIR/t10k-labels-idx1-ubyte.gz" "$MAX_TEST"
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "loaded in %.1f s\n", b - a }'
