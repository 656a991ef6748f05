"""Documents and ground truth: folders walked within limits, text extracted (Markdown, HTML, PDF), canonical text with sections, the ground truth loaded and its needles located."""
