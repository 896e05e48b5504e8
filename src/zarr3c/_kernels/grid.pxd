# Shared with boxes.pyx.

cdef enum:
    # A core's return when its input arrays changed under it between two passes (another
    # thread wrote them while the GIL was released): it stops rather than write out of bounds.
    CHANGED = -2
