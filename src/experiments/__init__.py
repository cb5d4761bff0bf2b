"""The book's experiment layer: the bench every chapter runs on (`experiments.lab.Lab`), the
comparisons, verdicts and their statistics, the claims page, plots and the book's style, and the
machinery that executes chapters. It builds on `unlearning` and `laboratory`."""
