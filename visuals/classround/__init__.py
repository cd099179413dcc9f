"""What a class round shows, as HTML: the draws' histogram against the expected counts, the guesses beside the model's
probabilities, greedy together's agreement, and the projector's and a student's views that hold them."""
