"""What all cardzoo games share: cards and deck strings, errors, options, observation layouts, rendering."""
