"""The iteration order of a ``java.util.HashMap<String, ?>``, which is the order Kafka Connect writes
maps in: ``JsonConverter`` reads a schemaless JSON object into a ``HashMap`` (and AvroData reads map
defaults into one), and Jackson writes a map in its iteration order, not in the order it was read.

That order is the table's: buckets by index, each bucket's entries in its chain. A chain keeps the
order its keys were put in, except for bins the map turned into red-black trees (9 keys or more in one
bucket of a table of 64 buckets or more: colliding keys, such as adversarial ones), whose chain order
also depends on the tree's shape (the root is moved to the front, a new key is linked after its tree
parent). ``hash_map_order`` follows the map as OpenJDK 8 to 21 implement it (the same ``HashMap``):
table sizes and resizes, the treeifying of crowded bins (or the resize instead, below 64 buckets), the
splitting of bins on resize, and red-black insertion with the usual rotations.

Results are cached per key sequence (objects of a topic mostly share their keys).
"""

from __future__ import annotations

_DEFAULT_CAPACITY = 16
_TREEIFY_THRESHOLD = 8  # a chain reaching 9 nodes is treeified (or the table grown)
_UNTREEIFY_THRESHOLD = 6  # a split tree bin of at most 6 nodes becomes a chain again
_MIN_TREEIFY_CAPACITY = 64
_CACHE_LIMIT = 4096

_orders: dict[tuple[str, ...], tuple[str, ...]] = {}  # for new HashMap<>()
_sized_orders: dict[tuple[tuple[str, ...], int], tuple[str, ...]] = {}  # for new HashMap<>(capacity)


def hash_map_order(keys: tuple[str, ...], initial_capacity: int | None = None) -> tuple[str, ...]:
    """The iteration order of ``new HashMap<>()`` (or ``new HashMap<>(initial_capacity)``) after
    ``put`` of ``keys`` in this order (distinct keys)."""
    if initial_capacity is None:
        order = _orders.get(keys)
        if order is None:
            order = _remember(_orders, keys, _order(keys, None))
        return order
    order = _sized_orders.get((keys, initial_capacity))
    if order is None:
        order = _remember(_sized_orders, (keys, initial_capacity), _order(keys, initial_capacity))
    return order


def in_hash_map_order(mapping: dict, initial_capacity: int | None = None) -> dict:
    """``mapping`` (its keys in the order they were put) as the ``HashMap`` made so iterates it: the same
    dict when its order is already the map's."""
    if len(mapping) < 2:
        return mapping
    keys = tuple(mapping)
    order = hash_map_order(keys, initial_capacity)
    if order == keys:
        return mapping
    reordered = {}
    for key in order:  # a plain loop: cheaper than a comprehension here
        reordered[key] = mapping[key]
    return reordered


def copy_capacity(size: int) -> int | None:
    """The initial capacity ``new HashMap<>(map)`` sizes its table for, ``map`` holding ``size`` entries
    (None: an empty map, whose copy gets the default table). ``putMapEntries`` as Java 17 computes it,
    ``(int) (size / 0.75f + 1.0f)``; Java 19 and later take ``ceil(size / 0.75)`` (JDK-8281631), a table
    half as large when ``size`` is 3 x 2^k. Puts that add a key then grow that table to Java 17's, so
    the iteration orders differ only when the puts add none."""
    return None if size == 0 else size * 4 // 3 + 1


def _remember(cache: dict, key, order: tuple[str, ...]) -> tuple[str, ...]:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()  # a topic whose objects all have other keys: memory stays bounded
    cache[key] = order
    return order


def string_hash(text: str) -> int:
    """``String.hashCode()`` (over UTF-16 code units) as an unsigned 32-bit int."""
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def _spread(text: str) -> int:
    """``HashMap.hash(key)``: the hash with its high half folded into the low half, as a signed int
    (tree bins compare hashes as Java ints)."""
    h = string_hash(text)
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def _table_size_for(capacity: int) -> int:
    size = 1
    while size < capacity:
        size *= 2
    return size


def _order(keys: tuple[str, ...], initial_capacity: int | None) -> tuple[str, ...]:
    capacity = _DEFAULT_CAPACITY if initial_capacity is None else _table_size_for(initial_capacity)
    hashes = [_spread(k) for k in keys]
    # Without a bin of 9 keys in the smallest table (every later bin is part of one of its bins), the map
    # never treeifies nor grows early: the chains of the final table in insertion order are the order.
    first_bins: dict[int, int] = {}
    for h in hashes:
        first_bins[h & (capacity - 1)] = first_bins.get(h & (capacity - 1), 0) + 1
    if max(first_bins.values(), default=0) <= _TREEIFY_THRESHOLD:
        threshold = int(capacity * 0.75)
        while len(keys) > threshold:
            capacity *= 2
            threshold = int(capacity * 0.75)
        chains: dict[int, list[str]] = {}
        for key, h in zip(keys, hashes):
            chains.setdefault(h & (capacity - 1), []).append(key)
        return tuple(key for index in sorted(chains) for key in chains[index])
    table = _Table(capacity)
    for key, h in zip(keys, hashes):
        table.put(key, h)
    return tuple(table.iteration_order())


def _java_compare(a: str, b: str) -> int:
    """``String.compareTo``: by UTF-16 code units (not code points), then by length."""
    ua, ub = a.encode("utf-16-be", "surrogatepass"), b.encode("utf-16-be", "surrogatepass")
    return (ua > ub) - (ua < ub)


class _Node:
    __slots__ = ("key", "hash", "next", "prev", "parent", "left", "right", "red")
    prev: _Node | None
    parent: _Node | None
    left: _Node | None
    right: _Node | None

    def __init__(self, key: str, h: int, next_node: _Node | None = None):
        self.key, self.hash, self.next = key, h, next_node
        self.prev = self.parent = self.left = self.right = None
        self.red = False


class _Table:
    """The table of a HashMap: ``bins[i]`` is the first node of bucket ``i``'s chain; ``trees`` holds
    the indexes whose bin is a red-black tree (its nodes' ``next`` is still the chain)."""

    def __init__(self, capacity: int):
        self.bins: list[_Node | None] = [None] * capacity
        self.trees: set[int] = set()
        self.threshold = int(capacity * 0.75)
        self.size = 0

    def iteration_order(self) -> list[str]:
        order = []
        for node in self.bins:
            while node is not None:
                order.append(node.key)
                node = node.next
        return order

    def put(self, key: str, h: int) -> None:
        index = h & (len(self.bins) - 1)
        first = self.bins[index]
        if first is None:
            self.bins[index] = _Node(key, h)
        elif index in self.trees:
            self._put_in_tree(index, key, h)
        else:
            count, node = 1, first
            while node.next is not None:
                node, count = node.next, count + 1
            node.next = _Node(key, h)
            if count >= _TREEIFY_THRESHOLD:  # the chain had 8 nodes and now has 9
                self._treeify_bin(index)
        self.size += 1
        if self.size > self.threshold:
            self._resize()

    def _treeify_bin(self, index: int) -> None:
        if len(self.bins) < _MIN_TREEIFY_CAPACITY:
            self._resize()  # a small table grows instead
            return
        first = self.bins[index]
        assert first is not None  # the bin whose chain just reached 9 nodes
        node: _Node | None = first
        prev: _Node | None = None
        while node is not None:
            node.prev, node.parent, node.left, node.right = prev, None, None, None
            prev, node = node, node.next
        self._treeify(index, first)

    def _resize(self) -> None:
        old = self.bins
        old_capacity = len(old)
        self.bins = [None] * (old_capacity * 2)
        self.threshold = int(len(self.bins) * 0.75)
        old_trees, self.trees = self.trees, set()
        for index, first in enumerate(old):
            if first is None:
                continue
            low: list[_Node] = []
            high: list[_Node] = []
            node: _Node | None = first
            while node is not None:
                (high if node.hash & old_capacity else low).append(node)
                node = node.next
            for target, nodes, other in ((index, low, high), (index + old_capacity, high, low)):
                if not nodes:
                    continue
                for a, b in zip(nodes, nodes[1:] + [None]):
                    a.next = b
                    if b is not None:
                        b.prev = a
                nodes[0].prev = None
                self.bins[target] = nodes[0]
                if index in old_trees and len(nodes) > _UNTREEIFY_THRESHOLD:
                    self.trees.add(target)
                    if other:  # a bin split in two is treeified again; one moved whole keeps its tree
                        self._treeify(target, nodes[0])

    # -- tree bins -----------------------------------------------------------------------------

    def _treeify(self, index: int, first: _Node) -> None:
        """Builds the bin's tree by inserting its nodes in chain order, then moves the root to the
        front of the chain."""
        self.trees.add(index)
        root: _Node | None = None
        node: _Node | None = first
        while node is not None:
            following = node.next
            node.left = node.right = None
            if root is None:
                node.parent, node.red, root = None, False, node
            else:
                parent = root
                while True:
                    go_left = _goes_left(node, parent)
                    child = parent.left if go_left else parent.right
                    if child is None:
                        node.parent = parent
                        if go_left:
                            parent.left = node
                        else:
                            parent.right = node
                        root = _balance_insertion(root, node)
                        break
                    parent = child
            node = following
        assert root is not None
        self._move_root_to_front(index, root)

    def _put_in_tree(self, index: int, key: str, h: int) -> None:
        root = self.bins[index]
        assert root is not None
        while root.parent is not None:
            root = root.parent
        new = _Node(key, h)
        parent = root
        while True:
            go_left = _goes_left(new, parent)
            child = parent.left if go_left else parent.right
            if child is None:
                break
            parent = child
        # Linked into the chain right after its tree parent.
        new.next, new.prev, new.parent = parent.next, parent, parent
        if parent.next is not None:
            parent.next.prev = new
        parent.next = new
        if go_left:
            parent.left = new
        else:
            parent.right = new
        self._move_root_to_front(index, _balance_insertion(root, new))

    def _move_root_to_front(self, index: int, root: _Node) -> None:
        first = self.bins[index]
        if first is root:
            return
        if root.next is not None:
            root.next.prev = root.prev
        if root.prev is not None:
            root.prev.next = root.next
        root.next, root.prev = first, None
        if first is not None:
            first.prev = root
        self.bins[index] = root


def _goes_left(node: _Node, at: _Node) -> bool:
    """Whether ``node`` descends to the left of ``at``: by hash as a Java int, then by compareTo (distinct
    String keys of one hash are never equal)."""
    if at.hash != node.hash:
        return at.hash > node.hash
    return _java_compare(node.key, at.key) <= 0


def _rotate_left(root: _Node, p: _Node) -> _Node:
    r = p.right
    if r is not None:
        p.right = r.left
        if r.left is not None:
            r.left.parent = p
        r.parent = p.parent
        if p.parent is None:
            root = r
            r.red = False
        elif p.parent.left is p:
            p.parent.left = r
        else:
            p.parent.right = r
        r.left = p
        p.parent = r
    return root


def _rotate_right(root: _Node, p: _Node) -> _Node:
    left = p.left
    if left is not None:
        p.left = left.right
        if left.right is not None:
            left.right.parent = p
        left.parent = p.parent
        if p.parent is None:
            root = left
            left.red = False
        elif p.parent.right is p:
            p.parent.right = left
        else:
            p.parent.left = left
        left.right = p
        p.parent = left
    return root


def _balance_insertion(root: _Node, x: _Node) -> _Node:
    """Red-black insertion fix-up (recolouring and rotations); returns the root."""
    x.red = True
    while True:
        parent = x.parent
        if parent is None:
            x.red = False
            return x
        grand = parent.parent
        if not parent.red or grand is None:
            return root
        if parent is grand.left:
            uncle = grand.right
            if uncle is not None and uncle.red:
                uncle.red = parent.red = False
                grand.red = True
                x = grand
                continue
            if x is parent.right:
                x = parent
                root = _rotate_left(root, x)
                parent = x.parent
                grand = parent.parent if parent is not None else None
            if parent is not None:
                parent.red = False
                if grand is not None:
                    grand.red = True
                    root = _rotate_right(root, grand)
        else:
            uncle = grand.left
            if uncle is not None and uncle.red:
                uncle.red = parent.red = False
                grand.red = True
                x = grand
                continue
            if x is parent.left:
                x = parent
                root = _rotate_right(root, x)
                parent = x.parent
                grand = parent.parent if parent is not None else None
            if parent is not None:
                parent.red = False
                if grand is not None:
                    grand.red = True
                    root = _rotate_left(root, grand)
