//! `split`: routing each record to the first branch whose predicate
//! matches, Kafka's `KStream.split()` and `BranchedKStream`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::dsl::processors::{Branch, PassThrough, Predicate};
use crate::dsl::{Branched, KStream};

/// A stream being split into branches; see [`KStream::split`].
///
/// ```
/// use streams_core::StreamsBuilder;
/// use streams_core::dsl::Branched;
///
/// let builder = StreamsBuilder::new();
/// let branches = builder
///     .stream::<String, i64>("amounts")
///     .named("split-")
///     .split()
///     .branch(|_, v| *v < 0, "negative")
///     .branch(|_, v| *v == 0, Branched::as_("zero"))
///     .default_branch("positive");
/// assert_eq!(
///     branches.keys().collect::<Vec<_>>(),
///     ["split-negative", "split-positive", "split-zero"]
/// );
/// branches["split-negative"].clone().to("refunds");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BranchedKStream<K, V> {
    source: KStream<K, V>,
    splitter: String,
    predicates: Rc<RefCell<Vec<Predicate<K, V>>>>,
    children: Rc<RefCell<Vec<String>>>,
    branches: BTreeMap<String, KStream<K, V>>,
}

impl<K, V> std::fmt::Debug for BranchedKStream<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BranchedKStream")
            .field("source", &self.source)
            .field("splitter", &self.splitter)
            .field("children", &self.children.borrow())
            .field("branches", &self.branches)
            .finish_non_exhaustive()
    }
}

impl<K: Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// Splits the stream: each record goes to the first branch whose
    /// predicate is true, or to the default branch, or nowhere. The
    /// splitter is `KSTREAM-BRANCH-000000000N` unless [named](KStream::named);
    /// branch names are the splitter's name followed by the branch's name
    /// or position. Tombstones go to the default branch.
    pub fn split(mut self) -> BranchedKStream<K, V> {
        let splitter = self.take_name_and_number("KSTREAM-BRANCH-");
        let predicates: Rc<RefCell<Vec<Predicate<K, V>>>> = Rc::default();
        let children: Rc<RefCell<Vec<String>>> = Rc::default();
        let (p, c) = (predicates.clone(), children.clone());
        self.add_processor::<K, V, _, _>(
            splitter.clone(),
            move || Branch {
                predicates: Rc::new(p.borrow().clone()),
                children: Rc::new(c.borrow().clone()),
            },
            None,
            None,
        );
        BranchedKStream {
            source: self,
            splitter,
            predicates,
            children,
            branches: BTreeMap::new(),
        }
    }
}

impl<K: Clone + 'static, V: Clone + 'static> BranchedKStream<K, V> {
    /// Adds a branch for the records that match `predicate` (and no
    /// earlier branch). `branched` is a name (`"eu"`) or a [`Branched`].
    #[must_use]
    pub fn branch(
        mut self,
        predicate: impl Fn(Option<&K>, &V) -> bool + 'static,
        branched: impl Into<Branched<K, V>>,
    ) -> Self {
        self.predicates.borrow_mut().push(Rc::new(predicate));
        let index = self.predicates.borrow().len();
        self.create_branch(branched.into(), index);
        self
    }

    /// Adds the default branch and returns all branches by name.
    pub fn default_branch(
        mut self,
        branched: impl Into<Branched<K, V>>,
    ) -> BTreeMap<String, KStream<K, V>> {
        self.create_branch(branched.into(), 0);
        self.branches
    }

    /// Returns all branches by name, without a default branch: records no
    /// predicate matches are dropped.
    pub fn no_default_branch(self) -> BTreeMap<String, KStream<K, V>> {
        self.branches
    }

    fn create_branch(&mut self, branched: Branched<K, V>, index: usize) {
        let child = match &branched.name {
            Some(n) => format!("{}{n}", self.splitter),
            None => format!("{}{index}", self.splitter),
        };
        self.children.borrow_mut().push(child.clone());
        // Kafka takes a number from the counter for every branch.
        let _ = self.source.builder().new_name(&child);
        let (ks, vs) = (
            self.source.key_serde.clone(),
            self.source.value_serde.clone(),
        );
        let mut splitter = KStream::new(
            self.source.builder().clone(),
            self.splitter.clone(),
            ks.clone(),
            vs.clone(),
        );
        // A branch keeps the split stream's repartition mark, as in Kafka.
        splitter.repartition_required = self.source.repartition_required;
        let stream = splitter.add_processor::<K, V, _, _>(child.clone(), || PassThrough, ks, vs);
        match branched.chain {
            Some(chain) => {
                if let Some(s) = chain(stream) {
                    self.branches.insert(child, s);
                }
            }
            None => {
                self.branches.insert(child, stream);
            }
        }
    }
}
