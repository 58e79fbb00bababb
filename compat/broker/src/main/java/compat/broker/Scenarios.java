package compat.broker;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DeleteRecordsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Produce / delete-records / compaction sequences run against a real broker with Kafka's Java
 * clients. Each scenario is a method below; SCENARIOS.md describes every step exactly (it is the
 * spec for the Rust mirror) and the JSON each step writes.
 */
final class Scenarios {
    private Scenarios() {}

    static final long T0 = Golden.T0;

    /**
     * The admin client's timeout for a delete_records or list_offsets step. Kafka's admin client
     * retries an unknown topic or partition (it waits for metadata) until this timeout.
     */
    static final int STEP_TIMEOUT_MS = 5_000;

    static final List<String> NAMES = List.of(
        "delete_records",
        "consumer_reset_after_delete",
        "delete_records_errors",
        "produce_errors",
        "compaction_keeps_latest",
        "tombstone_expires",
        "partitioner",
        "transactions");

    static String run(final String bootstrap, final String name) throws Exception {
        try (Run r = new Run(bootstrap, name)) {
            switch (name) {
                case "delete_records" -> deleteRecords(r);
                case "consumer_reset_after_delete" -> consumerResetAfterDelete(r);
                case "delete_records_errors" -> deleteRecordsErrors(r);
                case "produce_errors" -> produceErrors(r);
                case "compaction_keeps_latest" -> compactionKeepsLatest(r);
                case "tombstone_expires" -> tombstoneExpires(r);
                case "partitioner" -> partitioner(r);
                case "transactions" -> transactions(r);
                default -> throw new IllegalArgumentException("unknown scenario: " + name + " (known: " + NAMES + ")");
            }
            final Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("kafka_version", Main.KAFKA_VERSION);
            doc.put("scenario", name);
            doc.put("steps", r.steps);
            return Json.write(doc);
        }
    }

    // ------------------------------------------------------------------ topic configs

    /** cleanup.policy=delete with time retention off (the explicit timestamps are from 2023). */
    static Map<String, String> deletePolicy() {
        return Map.of("cleanup.policy", "delete", "retention.ms", "-1");
    }

    /** A compacted topic that the cleaner picks up quickly. */
    static Map<String, String> compactPolicy(final long deleteRetentionMs) {
        return Map.of(
            "cleanup.policy", "compact",
            "segment.ms", "100",
            "min.cleanable.dirty.ratio", "0.01",
            "min.compaction.lag.ms", "0",
            "delete.retention.ms", Long.toString(deleteRetentionMs));
    }

    /** Records k{from}..k{to-1} = v{i}, timestamp T0 + 1000 i, header i = "{i}". */
    static List<Rec> numbered(final int from, final int to) {
        final List<Rec> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(new Rec("k" + i, "v" + i, T0 + 1000L * i, hs("i", Integer.toString(i))));
        }
        return out;
    }

    /** Headers from key, value pairs: hs("a", "1", "b", null) is [["a", "1"], ["b", null]]. */
    static List<String[]> hs(final String... kv) {
        final List<String[]> out = new ArrayList<>();
        for (int i = 0; i < kv.length; i += 2) {
            out.add(new String[] {kv[i], kv[i + 1]});
        }
        return out;
    }

    // ------------------------------------------------------------------ scenarios

    static void deleteRecords(final Run r) throws Exception {
        final String t = "delete_records";
        r.createTopic(t, 1, deletePolicy());
        final List<Rec> recs = numbered(0, 10);
        // Record 0 also carries a header whose value is null.
        recs.set(0, new Rec("k0", "v0", T0, hs("i", "0", "null-header", null)));
        r.produce(t, 0, recs);
        r.listOffsets(t, 0, "earliest", null);
        r.listOffsets(t, 0, "latest", null);
        r.listOffsets(t, 0, "timestamp", T0);
        r.listOffsets(t, 0, "timestamp", T0 + 5500);
        r.listOffsets(t, 0, "timestamp", T0 + 9000);
        r.listOffsets(t, 0, "timestamp", T0 + 9001);
        r.listOffsets(t, 0, "max_timestamp", null);
        r.deleteRecords(t, 0, 4);
        r.read(t, 0);
        r.deleteRecords(t, 0, 2);
        r.deleteRecords(t, 0, 4);
        r.listOffsets(t, 0, "timestamp", T0);
        r.deleteRecords(t, 0, -1);
        r.read(t, 0);
        r.deleteRecords(t, 0, 11);
        r.deleteRecords(t, 0, 20);
        r.read(t, 0);
        r.produce(t, 0, numbered(10, 12));
        r.read(t, 0);
        r.deleteRecords(t, 0, 12);
        r.read(t, 0);
    }

    static void consumerResetAfterDelete(final Run r) throws Exception {
        final String t = "consumer_reset_after_delete";
        r.createTopic(t, 1, deletePolicy());
        r.produce(t, 0, numbered(0, 10));
        r.deleteRecords(t, 0, 6);
        r.consume(t, 0, "earliest", 2);
        r.consume(t, 0, "latest", 2);
        r.consume(t, 0, "none", 2);
        r.consume(t, 0, "earliest", 6);
        r.consume(t, 0, "none", 7);
        r.consume(t, 0, "none", 10);
        r.consume(t, 0, "earliest", 15);
        r.consume(t, 0, "latest", 15);
        r.consume(t, 0, "none", 15);
        r.read(t, 0);
    }

    static void deleteRecordsErrors(final Run r) throws Exception {
        final String compacted = "delete_records_errors_compacted";
        r.createTopic(compacted, 1, Map.of("cleanup.policy", "compact"));
        r.produce(compacted, 0, numbered(0, 3));
        r.deleteRecords(compacted, 0, 1);
        r.deleteRecords(compacted, 0, -1);
        r.read(compacted, 0);

        final String both = "delete_records_errors_both";
        r.createTopic(both, 1, Map.of("cleanup.policy", "compact,delete", "retention.ms", "-1"));
        r.produce(both, 0, numbered(0, 3));
        r.deleteRecords(both, 0, 2);
        r.read(both, 0);

        final String empty = "delete_records_errors_empty";
        r.createTopic(empty, 1, deletePolicy());
        r.deleteRecords(empty, 0, 0);
        r.deleteRecords(empty, 0, -1);
        r.deleteRecords(empty, 0, 1);
        r.deleteRecords(empty, 3, 0);
        r.read(empty, 0);

        r.deleteRecords("no_such_topic", 0, 0);
        r.listOffsets("no_such_topic", 0, "latest", null);
        r.listOffsets(empty, 3, "latest", null);
    }

    static void produceErrors(final Run r) throws Exception {
        final String t = "produce_errors";
        r.createTopic(t, 1, Map.of("cleanup.policy", "delete", "retention.ms", "-1", "max.message.bytes", "1024"));
        r.produce(t, 0, List.of(new Rec("big", "x".repeat(2000), T0, hs())));
        r.produce(t, 0, List.of(new Rec("small", "fits", T0 + 1000, hs())));
        r.produce(t, 5, List.of(new Rec("k", "bad partition", T0 + 2000, hs())));
        r.produce("no_such_topic", null, List.of(new Rec("k", "unknown topic", T0 + 3000, hs())));
        r.read(t, 0);
    }

    static void compactionKeepsLatest(final Run r) throws Exception {
        final String t = "compaction_keeps_latest";
        r.createTopic(t, 1, compactPolicy(86_400_000L));
        // Batch A, offsets 0-4: every key once.
        final List<Rec> a = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            a.add(new Rec("k" + i, "a" + i, T0 + (i - 1) * 1000L, hs("batch", "a")));
        }
        r.produce(t, 0, a);
        // Batch B, offsets 5-9: overwrites, one with a null-valued header, and a tombstone for k4.
        r.produce(t, 0, List.of(
            new Rec("k1", "b1", T0 + 5000, hs("batch", "b")),
            new Rec("k2", "b2", T0 + 6000, hs("batch", "b")),
            new Rec("k3", "b3", T0 + 7000, hs("batch", "b", "null", null)),
            new Rec("k1", "b1-again", T0 + 8000, hs("batch", "b")),
            new Rec("k4", null, T0 + 9000, hs("batch", "b", "why", "gdpr"))));
        // Batch C, offsets 10-11.
        r.produce(t, 0, List.of(
            new Rec("k2", "c2", T0 + 10_000, hs("batch", "c")),
            new Rec("k5", "c5", T0 + 11_000, hs("batch", "c"))));
        r.sleep(300);
        // Rolls the segment (segment.ms passed), so everything before it can be cleaned.
        r.produce(t, 0, List.of(new Rec("roll", "r1", T0 + 12_000, hs())));
        r.waitCompacted(t, 0);
        r.read(t, 0);
        r.consume(t, 0, "none", 1);
        r.consume(t, 0, "none", 9);
        r.listOffsets(t, 0, "timestamp", T0 + 500);
    }

    static void tombstoneExpires(final Run r) throws Exception {
        final String t = "tombstone_expires";
        r.createTopic(t, 1, compactPolicy(1000));
        // Batch A, offsets 0-2.
        r.produce(t, 0, List.of(
            new Rec("k1", "a1", T0, hs()),
            new Rec("k2", "a2", T0 + 1000, hs()),
            new Rec("k3", "a3", T0 + 2000, hs())));
        // Batch B, offsets 3-4: k1 overwritten, k2 deleted.
        r.produce(t, 0, List.of(
            new Rec("k1", "b1", T0 + 3000, hs()),
            new Rec("k2", null, T0 + 4000, hs())));
        r.sleep(300);
        r.produce(t, 0, List.of(new Rec("roll", "r1", T0 + 5000, hs())));
        // First cleaning: the tombstone is kept and its batch gets delete horizon now + 1000 ms.
        r.waitCompacted(t, 0);
        r.read(t, 0);
        // Past the horizon; nothing is written, so nothing is cleaned and the tombstone stays.
        r.sleep(2500);
        r.read(t, 0);
        // New writes make the log dirty again; the second cleaning drops the expired tombstone.
        r.produce(t, 0, List.of(new Rec("k4", "c4", T0 + 6000, hs())));
        r.sleep(300);
        r.produce(t, 0, List.of(new Rec("roll", "r2", T0 + 7000, hs())));
        r.waitCompacted(t, 0);
        r.read(t, 0);
    }

    static void partitioner(final Run r) throws Exception {
        final String t = "partitioner";
        r.createTopic(t, 3, deletePolicy());
        final List<Rec> recs = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            recs.add(new Rec("key-" + i, "value-" + i, T0 + 1000L * i, hs()));
        }
        r.produce(t, null, recs);
        r.read(t, 0);
        r.read(t, 1);
        r.read(t, 2);
    }

    /**
     * A committed 10-record transaction, an aborted 5-record one and a committed 1-record one on
     * one partition: the markers take offsets 10, 16 and 18, the high watermark is 19. During the
     * third, the last stable offset is its first offset (17). Then a producer with the same
     * transactional.id fences the first in the middle of a transaction (its abort marker is 20).
     */
    static void transactions(final Run r) throws Exception {
        final String t = "transactions";
        final String id = "transactions-tx";
        r.createTopic(t, 1, deletePolicy());
        r.txnInit("a", id);
        r.txnBegin("a");
        r.txnProduce("a", t, 0, numbered(0, 10));
        r.txnCommit("a");
        r.waitStable(t, 0);
        r.txnBegin("a");
        r.txnProduce("a", t, 0, numbered(10, 15));
        r.txnAbort("a");
        r.waitStable(t, 0);
        r.txnBegin("a");
        r.txnProduce("a", t, 0, numbered(15, 16));
        // The third transaction is open.
        r.listOffsetsIsolated(t, 0, "read_uncommitted");
        r.listOffsetsIsolated(t, 0, "read_committed");
        r.readIsolated(t, 0, "read_committed");
        r.readIsolated(t, 0, "read_uncommitted");
        r.txnCommit("a");
        r.waitStable(t, 0);
        r.listOffsetsIsolated(t, 0, "read_uncommitted");
        r.listOffsetsIsolated(t, 0, "read_committed");
        r.readIsolated(t, 0, "read_committed");
        r.readIsolated(t, 0, "read_uncommitted");
        // Fencing: b takes over the transactional.id while a has a transaction open.
        r.txnBegin("a");
        r.txnProduce("a", t, 0, numbered(16, 17));
        r.txnInit("b", id);
        r.txnCommit("a");
        r.waitStable(t, 0);
        r.listOffsetsIsolated(t, 0, "read_uncommitted");
        r.listOffsetsIsolated(t, 0, "read_committed");
        r.readIsolated(t, 0, "read_committed");
        r.readIsolated(t, 0, "read_uncommitted");
        r.txnBegin("b");
        r.txnProduce("b", t, 0, numbered(17, 18));
        r.txnCommit("b");
        r.waitStable(t, 0);
        r.readIsolated(t, 0, "read_committed");
        // A transaction past its transaction.timeout.ms (1 s): the coordinator's check (every 10 s)
        // aborts it, and the late producer's calls fail.
        r.txnInitTimeout("c", "transactions-slow", 1000);
        r.txnBegin("c");
        r.txnProduce("c", t, 0, numbered(18, 19));
        r.sleep(15_000);
        r.txnCommit("c");
        r.txnAbort("c");
        r.txnBegin("c");
        r.txnProduce("c", t, 0, numbered(19, 20));
        r.txnCommit("c");
        r.waitStable(t, 0);
        r.readIsolated(t, 0, "read_committed");
        r.readIsolated(t, 0, "read_uncommitted");
    }

    // ------------------------------------------------------------------ the runner

    /** A transactional call on a producer. */
    @FunctionalInterface
    interface TxnCall {
        void run(KafkaProducer<byte[], byte[]> producer) throws Exception;
    }

    /** A record to produce: UTF-8 key and value (null allowed), timestamp, headers [key, value|null]. */
    record Rec(String key, String value, long timestamp, List<String[]> headers) {}

    static final class Run implements AutoCloseable {
        final String bootstrap;
        final String scenario;
        final Admin admin;
        final KafkaProducer<byte[], byte[]> producer;
        final List<Object> steps = new ArrayList<>();
        /** The transactional producers of the scenario, by the name its steps give them. */
        final Map<String, KafkaProducer<byte[], byte[]>> txnProducers = new HashMap<>();
        /** What a read from earliest would return if nothing were cleaned since the last read. */
        final Map<TopicPartition, List<Object>> model = new HashMap<>();

        Run(final String bootstrap, final String scenario) {
            this.bootstrap = bootstrap;
            this.scenario = scenario;
            final Properties a = new Properties();
            a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            a.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
            a.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 20_000);
            admin = Admin.create(a);
            final Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
            p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
            // One produce step = one batch per partition: records wait (linger) until flush().
            p.put(ProducerConfig.LINGER_MS_CONFIG, 10_000);
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 3_000);
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 20_000);
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
            producer = new KafkaProducer<>(p);
        }

        @Override
        public void close() {
            for (final KafkaProducer<byte[], byte[]> p : txnProducers.values()) {
                p.close(Duration.ofSeconds(5));
            }
            producer.close(Duration.ofSeconds(5));
            admin.close(Duration.ofSeconds(5));
        }

        Map<String, Object> step(final String kind) {
            final Map<String, Object> s = new LinkedHashMap<>();
            s.put("step", kind);
            steps.add(s);
            return s;
        }

        static Throwable unwrap(final Throwable e) {
            Throwable t = e;
            while ((t instanceof ExecutionException || t.getClass() == org.apache.kafka.common.KafkaException.class)
                && t.getCause() != null) {
                t = t.getCause();
            }
            return t;
        }

        Map<String, Object> error(final Throwable e) {
            final Throwable t = unwrap(e);
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("error", t.getClass().getSimpleName());
            String msg = t.getMessage() == null ? "" : t.getMessage();
            // The broker's address appears in some client messages; keep the files port-free.
            msg = msg.replace(bootstrap, "BROKER").replaceAll("127\\.0\\.0\\.1:\\d+", "BROKER");
            // The admin client's timeouts come in two wordings, with deadlines and retry counts
            // ("Call(callName=deleteRecords(api=METADATA), deadlineMs=...) timed out at ... after
            // N attempt(s)" or "Timed out waiting for a node assignment. Call:
            // deleteRecords(api=METADATA)"): keep only the call.
            final java.util.regex.Matcher call = java.util.regex.Pattern
                .compile("(?:callName=|Call: )(\\w+\\(api=\\w+\\))").matcher(msg);
            if (t instanceof org.apache.kafka.common.errors.TimeoutException && call.find()) {
                msg = "admin call " + call.group(1) + " timed out";
            }
            m.put("message", msg);
            return m;
        }

        void createTopic(final String topic, final int partitions, final Map<String, String> configs) throws Exception {
            // A previous run on the same broker may have left the topic: delete it first.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            if (admin.listTopics().names().get().contains(topic)) {
                admin.deleteTopics(List.of(topic)).all().get();
            }
            while (true) {
                try {
                    admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs))).all().get();
                    break;
                } catch (final ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException) || System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(200);
                }
            }
            // Wait until the leader is known to the clients (metadata propagated).
            while (true) {
                try {
                    for (int p = 0; p < partitions; p++) {
                        admin.listOffsets(Map.of(new TopicPartition(topic, p), OffsetSpec.latest())).all().get();
                    }
                    break;
                } catch (final ExecutionException e) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
            }
            final Map<String, Object> s = step("create_topic");
            s.put("topic", topic);
            s.put("partitions", partitions);
            s.put("configs", new TreeMap<String, Object>(configs));
            s.put("result", "ok");
        }

        void produce(final String topic, final Integer partition, final List<Rec> recs) {
            final Map<String, Object> s = step("produce");
            send(producer, s, topic, partition, recs);
        }

        /** The records sent, flushed, and their results written into step s. */
        void send(final KafkaProducer<byte[], byte[]> producer, final Map<String, Object> s,
                  final String topic, final Integer partition, final List<Rec> recs) {
            s.put("topic", topic);
            s.put("partition", partition);
            final List<Object> in = new ArrayList<>();
            for (final Rec rec : recs) {
                final Map<String, Object> m = new LinkedHashMap<>();
                m.put("key", rec.key());
                m.put("value", rec.value());
                m.put("headers", headersJson(rec.headers()));
                m.put("timestamp", rec.timestamp());
                in.add(m);
            }
            s.put("records", in);
            final List<Object> futures = new ArrayList<>();
            for (final Rec rec : recs) {
                final List<Header> hs = new ArrayList<>();
                for (final String[] h : rec.headers()) {
                    hs.add(new RecordHeader(h[0], Golden.utf8(h[1])));
                }
                try {
                    futures.add(producer.send(new ProducerRecord<>(topic, partition, rec.timestamp(),
                        Golden.utf8(rec.key()), Golden.utf8(rec.value()), hs)));
                } catch (final Exception e) {
                    futures.add(e);
                }
            }
            producer.flush();
            final List<Object> results = new ArrayList<>();
            for (int i = 0; i < recs.size(); i++) {
                final Object f = futures.get(i);
                if (f instanceof Exception e) {
                    results.add(error(e));
                    continue;
                }
                try {
                    @SuppressWarnings("unchecked")
                    final RecordMetadata md = ((Future<RecordMetadata>) f).get(60, TimeUnit.SECONDS);
                    final Map<String, Object> m = new LinkedHashMap<>();
                    m.put("partition", md.partition());
                    m.put("offset", md.offset());
                    m.put("timestamp", md.timestamp());
                    results.add(m);
                    final Rec rec = recs.get(i);
                    model.computeIfAbsent(new TopicPartition(topic, md.partition()), k -> new ArrayList<>())
                        .add(recordJson(md.offset(), Golden.utf8(rec.key()), Golden.utf8(rec.value()),
                            headersJson(rec.headers()), rec.timestamp()));
                } catch (final Exception e) {
                    results.add(error(e));
                }
            }
            s.put("results", results);
        }

        void deleteRecords(final String topic, final int partition, final long beforeOffset) {
            final Map<String, Object> s = step("delete_records");
            s.put("topic", topic);
            s.put("partition", partition);
            s.put("before_offset", beforeOffset);
            final TopicPartition tp = new TopicPartition(topic, partition);
            try {
                final long lw = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(beforeOffset)),
                        new DeleteRecordsOptions().timeoutMs(STEP_TIMEOUT_MS))
                    .lowWatermarks().get(tp).get(60, TimeUnit.SECONDS).lowWatermark();
                s.put("result", Map.of("low_watermark", lw));
                final List<Object> m = model.get(tp);
                if (m != null) {
                    m.removeIf(o -> (Long) ((Map<?, ?>) o).get("offset") < lw);
                }
            } catch (final Exception e) {
                s.put("result", error(e));
            }
        }

        void txnInitTimeout(final String name, final String transactionalId, final int timeoutMs) {
            txnInit(name, transactionalId, timeoutMs);
        }

        void txnInit(final String name, final String transactionalId) {
            txnInit(name, transactionalId, 60_000);
        }

        /** A transactional producer named name: initTransactions with that transactional.id. */
        void txnInit(final String name, final String transactionalId, final int timeoutMs) {
            final Map<String, Object> s = step("txn_init");
            s.put("producer", name);
            s.put("transactional_id", transactionalId);
            s.put("transaction_timeout_ms", timeoutMs);
            final Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
            p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, timeoutMs);
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.LINGER_MS_CONFIG, 10_000);
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 20_000);
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
            final KafkaProducer<byte[], byte[]> txn = new KafkaProducer<>(p);
            txnProducers.put(name, txn);
            try {
                txn.initTransactions();
                s.put("result", "ok");
            } catch (final Exception e) {
                s.put("result", error(e));
            }
        }

        /** One transactional call (begin, commit, abort) on the producer named name. */
        void txnCall(final String kind, final String name, final TxnCall call) {
            final Map<String, Object> s = step(kind);
            s.put("producer", name);
            try {
                call.run(txnProducers.get(name));
                s.put("result", "ok");
            } catch (final Exception e) {
                s.put("result", error(e));
            }
        }

        void txnBegin(final String name) {
            txnCall("txn_begin", name, KafkaProducer::beginTransaction);
        }

        void txnCommit(final String name) {
            txnCall("txn_commit", name, KafkaProducer::commitTransaction);
        }

        void txnAbort(final String name) {
            txnCall("txn_abort", name, KafkaProducer::abortTransaction);
        }

        /** A produce step of the transactional producer named name. */
        void txnProduce(final String name, final String topic, final Integer partition, final List<Rec> recs) {
            final Map<String, Object> s = step("txn_produce");
            s.put("producer", name);
            send(txnProducers.get(name), s, topic, partition, recs);
        }

        /**
         * Waits (up to 30 s) until the last stable offset equals the high watermark in two reads
         * 100 ms apart: commitTransaction and abortTransaction return once the coordinator has
         * decided, and it writes the markers after that.
         */
        void waitStable(final String topic, final int partition) throws Exception {
            final TopicPartition tp = new TopicPartition(topic, partition);
            final Map<String, Object> s = step("wait_stable");
            s.put("topic", topic);
            s.put("partition", partition);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int stable = 0;
            while (stable < 2) {
                final long committed = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                        new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                    .partitionResult(tp).get(60, TimeUnit.SECONDS).offset();
                final long hw = offsets(tp, OffsetSpec.latest()).offset();
                stable = committed == hw ? stable + 1 : 0;
                if (System.nanoTime() > deadline) {
                    s.put("result", "unstable");
                    return;
                }
                if (stable < 2) {
                    Thread.sleep(100);
                }
            }
            s.put("result", "stable");
        }

        /** Admin.listOffsets(latest) at an isolation level: the LSO for read_committed. */
        void listOffsetsIsolated(final String topic, final int partition, final String isolation) {
            final Map<String, Object> s = step("list_offsets_isolated");
            s.put("topic", topic);
            s.put("partition", partition);
            s.put("isolation", isolation);
            try {
                final TopicPartition tp = new TopicPartition(topic, partition);
                final ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                        new ListOffsetsOptions(isolationLevel(isolation)).timeoutMs(STEP_TIMEOUT_MS))
                    .partitionResult(tp).get(60, TimeUnit.SECONDS);
                s.put("result", Map.of("offset", info.offset()));
            } catch (final Exception e) {
                s.put("result", error(e));
            }
        }

        static IsolationLevel isolationLevel(final String isolation) {
            return switch (isolation) {
                case "read_committed" -> IsolationLevel.READ_COMMITTED;
                case "read_uncommitted" -> IsolationLevel.READ_UNCOMMITTED;
                default -> throw new IllegalArgumentException(isolation);
            };
        }

        /**
         * A consumer at that isolation level from the beginning until its position reaches its end
         * offset taken at the start (the LSO for read_committed, the high watermark otherwise).
         */
        void readIsolated(final String topic, final int partition, final String isolation) throws Exception {
            final TopicPartition tp = new TopicPartition(topic, partition);
            final Map<String, Object> s = step("read_isolated");
            s.put("topic", topic);
            s.put("partition", partition);
            s.put("isolation", isolation);
            final List<Object> out = new ArrayList<>();
            final Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
            p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                final long end = c.endOffsets(List.of(tp)).get(tp);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (c.position(tp) < end) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("read of " + tp + " stuck at " + c.position(tp) + " < " + end);
                    }
                    for (final ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(200))) {
                        out.add(recordJson(rec));
                    }
                }
                s.put("records", out);
                s.put("position", c.position(tp));
            }
        }

        ListOffsetsResultInfo offsets(final TopicPartition tp, final OffsetSpec spec) throws Exception {
            return admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get(60, TimeUnit.SECONDS);
        }

        void listOffsets(final String topic, final int partition, final String spec, final Long timestamp) {
            final Map<String, Object> s = step("list_offsets");
            s.put("topic", topic);
            s.put("partition", partition);
            s.put("spec", spec);
            s.put("timestamp", timestamp);
            final OffsetSpec os = switch (spec) {
                case "earliest" -> OffsetSpec.earliest();
                case "latest" -> OffsetSpec.latest();
                case "max_timestamp" -> OffsetSpec.maxTimestamp();
                case "timestamp" -> OffsetSpec.forTimestamp(timestamp);
                default -> throw new IllegalArgumentException(spec);
            };
            try {
                final TopicPartition tp = new TopicPartition(topic, partition);
                final ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, os),
                        new ListOffsetsOptions().timeoutMs(STEP_TIMEOUT_MS))
                    .partitionResult(tp).get(60, TimeUnit.SECONDS);
                final Map<String, Object> m = new LinkedHashMap<>();
                m.put("offset", info.offset());
                m.put("timestamp", info.timestamp());
                s.put("result", m);
            } catch (final Exception e) {
                s.put("result", error(e));
            }
        }

        KafkaConsumer<byte[], byte[]> consumer(final String reset) {
            final Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, reset);
            p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            return new KafkaConsumer<>(p);
        }

        /** All records from the log start to the high watermark (assign + seekToBeginning + poll). */
        List<Object> readAll(final TopicPartition tp) throws Exception {
            final long end = offsets(tp, OffsetSpec.latest()).offset();
            final List<Object> out = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> c = consumer("earliest")) {
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (c.position(tp) < end) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("read of " + tp + " stuck at " + c.position(tp) + " < " + end);
                    }
                    for (final ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(200))) {
                        out.add(recordJson(rec));
                    }
                }
            }
            return out;
        }

        void read(final String topic, final int partition) throws Exception {
            final TopicPartition tp = new TopicPartition(topic, partition);
            final Map<String, Object> s = step("read");
            s.put("topic", topic);
            s.put("partition", partition);
            final List<Object> recs = readAll(tp);
            model.put(tp, new ArrayList<>(recs));
            s.put("records", recs);
            s.put("earliest", offsets(tp, OffsetSpec.earliest()).offset());
            s.put("latest", offsets(tp, OffsetSpec.latest()).offset());
        }

        /** A consumer with auto.offset.reset = reset, assigned the partition and seeked to offset. */
        void consume(final String topic, final int partition, final String reset, final long seek) throws Exception {
            final TopicPartition tp = new TopicPartition(topic, partition);
            final Map<String, Object> s = step("consume");
            s.put("topic", topic);
            s.put("partition", partition);
            s.put("auto_offset_reset", reset);
            s.put("seek", seek);
            final long end = offsets(tp, OffsetSpec.latest()).offset();
            final List<Object> recs = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> c = consumer(reset)) {
                c.assign(List.of(tp));
                c.seek(tp, seek);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                try {
                    // Poll (at least once) until the position is the end offset: a position past
                    // the end is out of range and gets reset (or fails) after a fetch.
                    do {
                        for (final ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(200))) {
                            recs.add(recordJson(rec));
                        }
                    } while (c.position(tp) != end && System.nanoTime() < deadline);
                    final Map<String, Object> m = new LinkedHashMap<>();
                    m.put("records", recs);
                    m.put("position", c.position(tp));
                    s.put("result", m);
                } catch (final Exception e) {
                    final Map<String, Object> m = error(e);
                    m.put("records", recs);
                    s.put("result", m);
                }
            }
        }

        void sleep(final long ms) throws InterruptedException {
            final Map<String, Object> s = step("sleep");
            s.put("ms", ms);
            Thread.sleep(ms);
        }

        /**
         * Waits (up to 60 s) until a read from earliest differs from what it would give had nothing
         * been cleaned (the last read plus the records produced since), then until three reads in a
         * row, 1 s apart, agree.
         */
        void waitCompacted(final String topic, final int partition) throws Exception {
            final TopicPartition tp = new TopicPartition(topic, partition);
            final Map<String, Object> s = step("wait_compacted");
            s.put("topic", topic);
            s.put("partition", partition);
            final List<Object> before = model.getOrDefault(tp, List.of());
            final long start = System.nanoTime();
            final long deadline = start + TimeUnit.SECONDS.toNanos(60);
            List<Object> now = readAll(tp);
            while (now.equals(before) && System.nanoTime() < deadline) {
                Thread.sleep(250);
                now = readAll(tp);
            }
            if (now.equals(before)) {
                s.put("result", "unchanged");
                System.err.printf("  %s: %s not compacted after %.1f s%n", scenario, tp, (System.nanoTime() - start) / 1e9);
                return;
            }
            final double changedAfter = (System.nanoTime() - start) / 1e9;
            int same = 1;
            while (same < 3) {
                Thread.sleep(1000);
                final List<Object> again = readAll(tp);
                same = again.equals(now) ? same + 1 : 1;
                now = again;
            }
            model.put(tp, new ArrayList<>(now));
            s.put("result", "compacted");
            System.err.printf("  %s: %s compacted after %.1f s (%d -> %d records), stable after %.1f s%n",
                scenario, tp, changedAfter, before.size(), now.size(), (System.nanoTime() - start) / 1e9);
        }

        // -------------------------------------------------------------- JSON of records

        static List<Object> headersJson(final List<String[]> headers) {
            final List<Object> out = new ArrayList<>();
            for (final String[] h : headers) {
                out.add(Arrays.asList(h[0], h[1]));
            }
            return out;
        }

        static Map<String, Object> recordJson(final long offset, final byte[] key, final byte[] value,
                                              final List<Object> headers, final long timestamp) {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("offset", offset);
            m.put("key", text(key));
            m.put("value", text(value));
            m.put("headers", headers);
            m.put("timestamp", timestamp);
            return m;
        }

        static Map<String, Object> recordJson(final ConsumerRecord<byte[], byte[]> rec) {
            final List<Object> hs = new ArrayList<>();
            for (final Header h : rec.headers()) {
                hs.add(Arrays.asList(h.key(), text(h.value())));
            }
            return recordJson(rec.offset(), rec.key(), rec.value(), hs, rec.timestamp());
        }

        /** UTF-8 text, or "hex:..." for bytes that are not valid UTF-8; null stays null. */
        static String text(final byte[] b) {
            if (b == null) {
                return null;
            }
            try {
                return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b)).toString();
            } catch (final CharacterCodingException e) {
                return "hex:" + Golden.hex(b);
            }
        }
    }
}
