"""Demo of webmem: a tiny local shop site and a local server for it."""
