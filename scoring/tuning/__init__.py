"""Tuned judges (paper 000, section 7): LoRA adapters that make a small judge model judge, trained
on labelled pairs, and cross-fitted scores of the campaign they were tuned on."""
