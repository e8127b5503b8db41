"""EmotionBench (Huang et al., NeurIPS 2024): do a model's self-reported emotions move as people's do."""
