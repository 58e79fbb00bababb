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
    /// or position. Tombstones go to the default branch. Kafka's
    /// `split()`.
    ///
    /// ```
    /// use streams_core::dsl::Branched;
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let branches = builder
    ///         .stream::<String, i64>("amounts")
    ///         .split()
    ///         .branch(|_, v| *v < 0, "refunds")
    ///         .branch(|_, v| *v == 0, Branched::as_("zero"))
    ///         .default_branch("payments");
    ///     // Each branch is named after the splitter, then the branch.
    ///     assert_eq!(
    ///         branches.keys().collect::<Vec<_>>(),
    ///         [
    ///             "KSTREAM-BRANCH-0000000001payments",
    ///             "KSTREAM-BRANCH-0000000001refunds",
    ///             "KSTREAM-BRANCH-0000000001zero",
    ///         ]
    ///     );
    ///     branches["KSTREAM-BRANCH-0000000001refunds"].clone().to("refunds");
    ///     branches["KSTREAM-BRANCH-0000000001payments"].clone().to("payments");
    /// });
    /// let amounts = driver.input::<String, i64>("amounts");
    /// amounts.pipe_key_values([("a", 5), ("b", -2), ("c", 0), ("d", -1)]);
    /// amounts.pipe_tombstone("e"); // no predicate sees it: the default branch
    /// // Each record goes to the first branch that matches: "c" to `zero`,
    /// // which nothing reads.
    /// assert_eq!(
    ///     driver.output::<String, i64>("refunds").read_key_values_to_list(),
    ///     [KeyValue::pair("b", -2), KeyValue::pair("d", -1)]
    /// );
    /// assert_eq!(
    ///     driver.output::<String, i64>("payments").read_key_values_to_list(),
    ///     [KeyValue::pair("a", 5), KeyValue::tombstone("e")]
    /// );
    /// ```
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
    /// Kafka's `branch(Predicate, Branched)`.
    ///
    /// The example of [`KStream::split`] shows `branch` and
    /// `default_branch`; the one of [`Branched`] a branch through a function.
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

    /// Adds the default branch, for the records no predicate matches and
    /// for tombstones, and returns all branches by name, Kafka's
    /// `defaultBranch`.
    ///
    /// The example of [`KStream::split`] shows `default_branch` too.
    #[doc(alias = "defaultBranch")]
    pub fn default_branch(
        mut self,
        branched: impl Into<Branched<K, V>>,
    ) -> BTreeMap<String, KStream<K, V>> {
        self.create_branch(branched.into(), 0);
        self.branches
    }

    /// Returns all branches by name, without a default branch: records no
    /// predicate matches are dropped, and tombstones are dropped and
    /// counted. Kafka's `noDefaultBranch`.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let branches = builder
    ///         .stream::<String, String>("events")
    ///         .named("events-")
    ///         .split()
    ///         .branch(|_, v| v.starts_with("click"), "clicks")
    ///         .no_default_branch();
    ///     branches["events-clicks"].clone().to("clicks");
    /// });
    /// let events = driver.input::<String, String>("events");
    /// events.pipe_key_values([("a", "click home"), ("b", "view home")]); // the view goes nowhere
    /// events.pipe_tombstone("c");
    /// assert_eq!(
    ///     driver.output::<String, String>("clicks").read_key_values_to_list(),
    ///     [KeyValue::pair("a", "click home")]
    /// );
    /// assert_eq!(driver.metrics().dropped_records, 1); // the tombstone
    /// ```
    #[doc(alias = "noDefaultBranch")]
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
