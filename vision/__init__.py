"""Frames to dice readings: cameras, settle detection, locating and the ONNX face model."""
