"""A shop's duties and the shop owner's view: age gate, health warning, privacy, shelf QR codes and deep
links, catalogue drops, the weekly report and admin commands."""
