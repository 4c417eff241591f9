"""Backends behind the seam: native onnxruntime here; the browser's onnxruntime-web comes with the site."""
