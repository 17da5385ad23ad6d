"""How sure an answer is: the evidence behind it as numbers, the calibrator that maps them to a
probability, the checks of an answer against its rows, candidate agreement, and the retry ladder that
acts on a weak step. Pure functions, safe in workflow code."""
