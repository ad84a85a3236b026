"""One view of a tree for every kernel that reads one: its paths as flat arrays (inline).

Design note: a tree (``hsw2v.huffman.Tree``, of any kind ``hsw2v.trees`` builds) is
stored as flat arrays, root first on every path: ``codes`` (uint8, V x max_length: the bit
taken at each step), ``points`` (int32, V x max_length: the inner node, a row of the output
matrix, at each step) and ``lengths`` (int32, V). ``TreeView`` points into them, read-only and
shared by every thread. ``fill_tree_view`` is its one fill, used by the training kernel
(``_inner``: hierarchical softmax's output), the scoring kernel (``_query``) and the layer's
(``_layer``); ``tree_fits`` is the shape check every one of them makes first. The caller keeps
the arrays alive while the view is in use. Row ``w``'s path is ``path_code(t, w)`` /
``path_point(t, w)``, ``t.lengths[w]`` steps long.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t


cdef struct TreeView:
    const uint8_t *codes    # V x max_length: the bit taken at each step, root first
    const int32_t *points   # V x max_length: the inner node (row of the matrix) at each step
    const int32_t *lengths  # V: each path's length
    int max_length


cdef inline bint tree_fits(const uint8_t[:, ::1] codes, const int32_t[:, ::1] points,
                           const int32_t[::1] lengths, Py_ssize_t V) noexcept:
    """Whether the three arrays describe ``V`` paths of one width (``codes`` and ``points``
    V x max_length, ``lengths`` V)."""
    return (codes.shape[0] == V and points.shape[0] == V and lengths.shape[0] == V
            and codes.shape[1] == points.shape[1])


cdef inline void fill_tree_view(TreeView *t, const uint8_t[:, ::1] codes,
                                const int32_t[:, ::1] points,
                                const int32_t[::1] lengths) noexcept:
    """Point ``t`` at a tree's arrays (checked first with ``tree_fits``; at least one row)."""
    t.codes = &codes[0, 0]
    t.points = &points[0, 0]
    t.lengths = &lengths[0]
    t.max_length = codes.shape[1]


cdef inline const uint8_t *path_code(const TreeView *t, int64_t w) noexcept nogil:
    """The bits of row ``w``'s path, root first."""
    return t.codes + w * t.max_length


cdef inline const int32_t *path_point(const TreeView *t, int64_t w) noexcept nogil:
    """The inner nodes of row ``w``'s path, root first."""
    return t.points + w * t.max_length
