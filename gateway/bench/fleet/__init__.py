"""Benches of gateway fleets: replicas behind a load balancer, fleet cells of `specgate evaluate --fleet`,
the load each replica routes on, replica summaries."""
