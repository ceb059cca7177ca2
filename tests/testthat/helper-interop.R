# Shared by the zarr-python interoperability tests: a Python script's
# common head, the encoding of values as exact text on both sides, and the
# run of one script over a JSON manifest. Every value is compared as text
# so that signed zeros, NaN and 64-bit integers are compared exactly.

# The start of every zarr-python script: imports, then `encode(v)`, which
# flattens an array in C order into JSON-safe text: integers as decimal
# strings, floats as exact hex strings (float.hex) or "NaN", "Infinity",
# "-Infinity", complex numbers as [re, im], strings as they are.
python_script_head <- '
import json, math, sys
import numpy as np
import zarr


def enc_float(x):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x.hex()


def encode(v):
    flat = np.asarray(v).ravel(order="C")
    kind = flat.dtype.kind
    if kind == "b":
        return [bool(x) for x in flat]
    if kind in "iu":
        return [str(int(x)) for x in flat]
    if kind == "f":
        return [enc_float(x) for x in flat]
    if kind == "c":
        return [[enc_float(x.real), enc_float(x.imag)] for x in flat]
    if kind in "OTU":
        return ["<None>" if x is None else str(x) for x in flat]
    if kind == "S":
        return [bytes(x).decode("utf-8") for x in flat]
    raise TypeError("unexpected numpy dtype %s" % flat.dtype)
'

# What zarr-python reads where R wrote NA: the default fill values.
python_fill <- c(int8 = "-128", int16 = "-32768", int32 = "-2147483648", int64 = "-9223372036854775808",
                 uint8 = "255", uint16 = "65535", uint32 = "4294967295", uint64 = "18446744073709551615",
                 string = "\u2400")

# R values as the text `encode` gives; NA as what zarr-python reads there (`na`).
encode_r <- function(x, type, na = python_fill[type]) {
  dim(x) <- NULL
  if (is.logical(x)) return(as.character(x))
  if (is.complex(x)) {
    x[is.na(x)] <- complex(real = NaN, imaginary = NaN)
    return(paste(sprintf("%a", Re(x)), sprintf("%a", Im(x))))
  }
  if (is.character(x)) {
    x[is.na(x)] <- na
    return(enc2utf8(x))
  }
  if (is.double(x) && !inherits(x, "integer64")) {
    x[is.na(x)] <- NaN
    return(sprintf("%a", x))
  }
  out <- as.character(x)
  out[is.na(x)] <- na
  out
}

# The parsed JSON of `encode` as the same text as encode_r().
encode_python <- function(values, type) {
  hex <- function(v) sprintf("%a", as.numeric(v))
  if (startsWith(type, "complex")) {
    return(paste(hex(vapply(values, function(v) v[[1L]], "")), hex(vapply(values, function(v) v[[2L]], ""))))
  }
  if (!length(values)) return(character(0))
  if (type == "string") return(enc2utf8(vapply(values, function(v) v, "")))
  v <- unlist(values)
  if (startsWith(type, "float")) hex(v) else as.character(v)
}

# Python's C-order flattening put into R's column-major order.
c_order_to_r <- function(v, shape) {
  if (length(shape) <= 1L) return(v)
  v[as.vector(aperm(array(seq_along(v), rev(shape)), rev(seq_along(shape))))]
}

# Run `script` with zarr-python as `script ARGS... MANIFEST OUT`, where
# MANIFEST holds `manifest` (JSON text) and OUT is where the script writes
# its result; that result, parsed.
run_python_script <- function(script, manifest, args = character(0)) {
  py <- python_zarr()
  dir <- withr::local_tempdir()
  script_file <- file.path(dir, "read.py")
  manifest_file <- file.path(dir, "manifest.json")
  out <- file.path(dir, "out.json")
  writeLines(script, script_file)
  writeLines(enc2utf8(as.character(manifest)), manifest_file, useBytes = TRUE)
  res <- run_python_command(py, c(script_file, args, manifest_file, out))
  if (res$status != 0L || !file.exists(out)) stop("the zarr-python script failed:\n", res$output, call. = FALSE)
  jsonlite::fromJSON(out, simplifyVector = FALSE)
}
