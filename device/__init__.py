"""Buttons and LEDs of the table (gpiozero); every class takes pin_factory=."""
