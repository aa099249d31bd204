#!/usr/bin/python3
# onnx_checker.py: onnx.checker.check_model (full_check: shape inference
# too) on every .onnx file of a directory; exits 1 when one fails.
#   /usr/bin/python3 test/interchange/onnx_checker.py DIR
import os
import sys

import onnx

failed = 0
files = sorted(f for f in os.listdir(sys.argv[1]) if f.endswith('.onnx'))
for f in files:
    try:
        onnx.checker.check_model(onnx.load(os.path.join(sys.argv[1], f)), full_check=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        print('%s: %s' % (f, str(e).splitlines()[0] if str(e) else type(e).__name__))
        failed += 1
print('onnx %s checker: %d models, %d failed' % (onnx.__version__, len(files), failed))
sys.exit(1 if failed or not files else 0)
