"""What an evaluation means: paired comparisons and families, the abstention gate, the outcome ladder, the funnel, hubs, granularity, cost, dense variants and the recommendation."""
