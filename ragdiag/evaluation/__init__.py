"""Running the configurations: strategies x retrievers over the ground truth's queries (records, rows, the progressive scheduler), and another system's run read against the same truth."""
