"""AMD GPUs through the KFD driver: packets, the driver interface, the MOCK GPU."""
