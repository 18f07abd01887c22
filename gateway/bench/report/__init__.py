"""Reports: per-class rows from bench results or live metrics (`specgate report`): the data, the metrics
read from a scrape or Prometheus, and the terminal/HTML rendering."""
