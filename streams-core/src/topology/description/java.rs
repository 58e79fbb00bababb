//! Java's collection orders, reproduced so that `describe()` prints what
//! Kafka prints.
//!
//! Kafka's `TopologyDescription` text depends on three Java details:
//! `String.hashCode` and `HashMap` bucket order (node names, store names
//! and topic names are kept in `HashSet`s), `String.compareTo`, and the
//! exact red-black tree of `TreeMap` (successor and predecessor lists are
//! `TreeSet`s filled while the comparator's sizes still change, so where an
//! element lands depends on the shape of the tree at that moment).
//!
//! What is not reproduced: a `HashMap` bin of eight or more colliding names
//! in a table of 64 buckets or more becomes a tree in Java, whose iteration
//! order differs; such names keep their insertion order here.

use std::cmp::Ordering;

/// Java's `String.hashCode`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16
/// code units, in wrapping 32-bit arithmetic.
pub(crate) fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0_i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Java's `String.compareTo`: UTF-16 code units, then length.
pub(crate) fn compare_strings(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `HashMap.hash`: the hash with its high half folded into the low half.
fn spread(s: &str) -> u32 {
    // Reinterpreting the bits is the point: Java shifts the int unsigned.
    let h = string_hash(s) as u32;
    h ^ (h >> 16)
}

/// `HashMap.tableSizeFor`: the smallest power of two at least `cap`.
fn table_size_for(cap: usize) -> usize {
    cap.max(1).next_power_of_two()
}

const TREEIFY_THRESHOLD: usize = 8;
const MIN_TREEIFY_CAPACITY: usize = 64;

/// A `java.util.HashSet<String>`, reduced to what decides its iteration
/// order: the table, its bins in insertion order, and when it grows.
#[derive(Debug)]
pub(crate) struct JavaHashSet<'a> {
    bins: Vec<Vec<&'a str>>,
    len: usize,
}

impl<'a> JavaHashSet<'a> {
    /// `new HashSet<>()`: 16 buckets.
    pub(crate) fn new() -> Self {
        Self::with_buckets(16)
    }

    /// `new HashSet<>(collection)` on Java 17: room for `n` elements,
    /// `max((int) (n / .75f) + 1, 16)` rounded up to a power of two.
    pub(crate) fn for_copy_of(n: usize) -> Self {
        // The float division is Java's; `as` truncates as Java's cast does.
        let wanted = (n as f32 / 0.75_f32) as usize + 1;
        Self::with_buckets(table_size_for(wanted.max(16)))
    }

    fn with_buckets(buckets: usize) -> Self {
        JavaHashSet {
            bins: vec![Vec::new(); buckets],
            len: 0,
        }
    }

    /// A copy of `items` as `new HashSet<>(items)` makes it.
    pub(crate) fn copy_of(items: impl IntoIterator<Item = &'a str>) -> Self {
        let items: Vec<&str> = items.into_iter().collect();
        let mut set = Self::for_copy_of(items.len());
        for s in items {
            set.insert(s);
        }
        set
    }

    /// `items` added one by one to `new HashSet<>()`.
    pub(crate) fn from_inserts(items: impl IntoIterator<Item = &'a str>) -> Self {
        let mut set = Self::new();
        for s in items {
            set.insert(s);
        }
        set
    }

    fn bucket(&self, s: &str) -> usize {
        // The table length is a power of two, at most `usize::MAX`.
        spread(s) as usize & (self.bins.len() - 1)
    }

    /// `add`: false when already present.
    pub(crate) fn insert(&mut self, s: &'a str) -> bool {
        let b = self.bucket(s);
        if self.bins[b].contains(&s) {
            return false;
        }
        let before = self.bins[b].len();
        self.bins[b].push(s);
        // `putVal` treeifies a bin that had eight nodes; a small table
        // grows instead.
        if before >= TREEIFY_THRESHOLD && self.bins.len() < MIN_TREEIFY_CAPACITY {
            self.grow();
        }
        self.len += 1;
        if self.len > self.bins.len() / 4 * 3 {
            self.grow();
        }
        true
    }

    /// `resize`: twice the buckets; each bin splits in two, keeping order.
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.bins);
        self.bins = vec![Vec::new(); old.len() * 2];
        for s in old.into_iter().flatten() {
            let b = self.bucket(s);
            self.bins[b].push(s);
        }
    }

    /// The elements in iteration order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.bins.iter().flatten().copied()
    }

    /// The elements in iteration order, owned.
    pub(crate) fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

/// One entry of a [`JavaTreeSet`].
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: usize,
    left: Option<usize>,
    right: Option<usize>,
    parent: Option<usize>,
    black: bool,
}

/// A `java.util.TreeSet` of small integers (node ids) with a comparator
/// that may change between insertions: the red-black tree of `TreeMap`,
/// insertion and rebalancing exactly as Java does them.
#[derive(Debug, Default, Clone)]
pub(crate) struct JavaTreeSet {
    entries: Vec<Entry>,
    root: Option<usize>,
}

impl JavaTreeSet {
    /// `add(key)`, comparing with `cmp` as it is now; false when `cmp`
    /// finds an equal element.
    pub(crate) fn insert(&mut self, key: usize, cmp: impl Fn(usize, usize) -> Ordering) -> bool {
        let Some(mut t) = self.root else {
            self.entries.push(Entry {
                key,
                left: None,
                right: None,
                parent: None,
                black: true,
            });
            self.root = Some(self.entries.len() - 1);
            return true;
        };
        let (parent, less) = loop {
            match cmp(key, self.entries[t].key) {
                Ordering::Less => match self.entries[t].left {
                    Some(l) => t = l,
                    None => break (t, true),
                },
                Ordering::Greater => match self.entries[t].right {
                    Some(r) => t = r,
                    None => break (t, false),
                },
                Ordering::Equal => return false,
            }
        };
        let x = self.entries.len();
        self.entries.push(Entry {
            key,
            left: None,
            right: None,
            parent: Some(parent),
            black: false,
        });
        if less {
            self.entries[parent].left = Some(x);
        } else {
            self.entries[parent].right = Some(x);
        }
        self.fix_after_insertion(x);
        true
    }

    /// The keys in iteration (in-order) order.
    pub(crate) fn keys(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.entries.len());
        let mut stack = Vec::new();
        let mut cur = self.root;
        while cur.is_some() || !stack.is_empty() {
            while let Some(c) = cur {
                stack.push(c);
                cur = self.entries[c].left;
            }
            if let Some(c) = stack.pop() {
                out.push(self.entries[c].key);
                cur = self.entries[c].right;
            }
        }
        out
    }

    fn parent_of(&self, x: Option<usize>) -> Option<usize> {
        x.and_then(|x| self.entries[x].parent)
    }

    fn left_of(&self, x: Option<usize>) -> Option<usize> {
        x.and_then(|x| self.entries[x].left)
    }

    fn right_of(&self, x: Option<usize>) -> Option<usize> {
        x.and_then(|x| self.entries[x].right)
    }

    /// `colorOf`: a missing entry is black.
    fn is_black(&self, x: Option<usize>) -> bool {
        x.is_none_or(|x| self.entries[x].black)
    }

    fn set_black(&mut self, x: Option<usize>, black: bool) {
        if let Some(x) = x {
            self.entries[x].black = black;
        }
    }

    fn rotate_left(&mut self, p: Option<usize>) {
        let Some(p) = p else { return };
        let Some(r) = self.entries[p].right else {
            return;
        };
        self.entries[p].right = self.entries[r].left;
        if let Some(rl) = self.entries[r].left {
            self.entries[rl].parent = Some(p);
        }
        self.entries[r].parent = self.entries[p].parent;
        match self.entries[p].parent {
            None => self.root = Some(r),
            Some(pp) if self.entries[pp].left == Some(p) => self.entries[pp].left = Some(r),
            Some(pp) => self.entries[pp].right = Some(r),
        }
        self.entries[r].left = Some(p);
        self.entries[p].parent = Some(r);
    }

    fn rotate_right(&mut self, p: Option<usize>) {
        let Some(p) = p else { return };
        let Some(l) = self.entries[p].left else {
            return;
        };
        self.entries[p].left = self.entries[l].right;
        if let Some(lr) = self.entries[l].right {
            self.entries[lr].parent = Some(p);
        }
        self.entries[l].parent = self.entries[p].parent;
        match self.entries[p].parent {
            None => self.root = Some(l),
            Some(pp) if self.entries[pp].right == Some(p) => self.entries[pp].right = Some(l),
            Some(pp) => self.entries[pp].left = Some(l),
        }
        self.entries[l].right = Some(p);
        self.entries[p].parent = Some(l);
    }

    /// `TreeMap.fixAfterInsertion`, line for line.
    fn fix_after_insertion(&mut self, x: usize) {
        let mut x = Some(x);
        self.set_black(x, false);
        while x.is_some() && x != self.root && !self.is_black(self.parent_of(x)) {
            let px = self.parent_of(x);
            let gx = self.parent_of(px);
            if px == self.left_of(gx) {
                let y = self.right_of(gx);
                if !self.is_black(y) {
                    self.set_black(px, true);
                    self.set_black(y, true);
                    self.set_black(gx, false);
                    x = gx;
                } else {
                    if x == self.right_of(px) {
                        x = px;
                        self.rotate_left(x);
                    }
                    let px = self.parent_of(x);
                    let gx = self.parent_of(px);
                    self.set_black(px, true);
                    self.set_black(gx, false);
                    self.rotate_right(gx);
                }
            } else {
                let y = self.left_of(gx);
                if !self.is_black(y) {
                    self.set_black(px, true);
                    self.set_black(y, true);
                    self.set_black(gx, false);
                    x = gx;
                } else {
                    if x == self.left_of(px) {
                        x = px;
                        self.rotate_right(x);
                    }
                    let px = self.parent_of(x);
                    let gx = self.parent_of(px);
                    self.set_black(px, true);
                    self.set_black(gx, false);
                    self.rotate_left(gx);
                }
            }
        }
        let root = self.root;
        self.set_black(root, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_matches_java() {
        // Values printed by Java's "...".hashCode().
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        assert_eq!(string_hash("hello"), 99_162_322);
        assert_eq!(string_hash("KSTREAM-SOURCE-0000000000"), 1_861_603_632);
    }

    #[test]
    fn compare_is_utf16_order() {
        assert_eq!(compare_strings("a", "b"), Ordering::Less);
        assert_eq!(compare_strings("ab", "a"), Ordering::Greater);
        // U+FF21 sorts after U+1F600 in UTF-8, before it in UTF-16.
        assert_eq!(compare_strings("\u{ff21}", "\u{1f600}"), Ordering::Greater);
    }

    #[test]
    fn hash_set_orders_by_bucket_then_insertion() {
        let set = JavaHashSet::from_inserts(["b", "a", "c"]);
        assert_eq!(set.iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        // 12 elements fit 16 buckets, a copy of them gets 32.
        assert_eq!(JavaHashSet::for_copy_of(11).bins.len(), 16);
        assert_eq!(JavaHashSet::for_copy_of(12).bins.len(), 32);
    }

    #[test]
    fn tree_set_with_a_fixed_order_sorts() {
        let mut set = JavaTreeSet::default();
        for k in [5, 3, 8, 1, 4, 7, 9, 2, 6, 0] {
            set.insert(k, |a: usize, b: usize| a.cmp(&b));
        }
        assert_eq!(set.keys(), (0..10).collect::<Vec<_>>());
        assert!(!set.insert(3, |a: usize, b: usize| a.cmp(&b)));
    }
}
