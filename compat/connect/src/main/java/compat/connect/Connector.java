package compat.connect;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.runtime.ConnectMetrics;
import org.apache.kafka.connect.runtime.InternalSinkRecord;
import org.apache.kafka.connect.runtime.SinkConnectorConfig;
import org.apache.kafka.connect.runtime.TransformationChain;
import org.apache.kafka.connect.runtime.TransformationStage;
import org.apache.kafka.connect.runtime.errors.DeadLetterQueueReporter;
import org.apache.kafka.connect.runtime.errors.ErrorHandlingMetrics;
import org.apache.kafka.connect.runtime.errors.ErrorReporter;
import org.apache.kafka.connect.runtime.errors.LogReporter;
import org.apache.kafka.connect.runtime.errors.ProcessingContext;
import org.apache.kafka.connect.runtime.errors.RetryWithToleranceOperator;
import org.apache.kafka.connect.runtime.errors.Stage;
import org.apache.kafka.connect.runtime.errors.ToleranceType;
import org.apache.kafka.connect.runtime.errors.WorkerErrantRecordReporter;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.runtime.standalone.StandaloneConfig;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.HeaderConverter;
import org.apache.kafka.connect.storage.StringConverter;
import org.apache.kafka.connect.util.ConnectorTaskId;

/**
 * One sink task's error handling, as Kafka Connect 4.4.0's {@code WorkerSinkTask} runs it, without
 * a broker: the consumed records are built here, and everything else is Kafka's own code: the
 * {@link SinkConnectorConfig} of the connector's properties, the converters, the transformation
 * chain built by {@code ConnectorConfig.transformationStages} from the {@code transforms.*}
 * properties, the {@link RetryWithToleranceOperator} (on a manual clock, its backoff recorded),
 * the {@link LogReporter.Sink} and the {@link DeadLetterQueueReporter} (over a mocked
 * {@link KafkaProducer} that captures each record), the {@link ErrorHandlingMetrics} (read back
 * from the metrics registry) and, for records the sink reports, the
 * {@link WorkerErrantRecordReporter}.
 *
 * <p>{@link #run} converts and transforms every record of one poll in order, as
 * {@code WorkerSinkTask.convertMessages} does ({@link #convertAndTransformRecord} is a copy of
 * Kafka's private method), then puts the batch to the sink, as {@code deliverMessages} does. A
 * {@link ConnectException} thrown on the way is the task's failure.
 */
final class Connector {
    /** The connector's name and task, as every scenario has them. */
    static final String NAME = "orders-sink";
    static final int TASK = 0;
    /** The clock when the task starts converting the poll. */
    static final long START_MS = 10_000L;

    /** A consumed record to be: where, when, and the bytes. */
    record Input(String topic, int partition, long timestamp, byte[] key, byte[] value, List<String[]> headers) {}

    private final String scenario;
    private final Map<String, String> props = new LinkedHashMap<>();
    private final List<Input> inputs = new ArrayList<>();
    private final List<String> transforms = new ArrayList<>();
    private final List<String> predicates = new ArrayList<>();
    private Converter keyConverter = stringConverter(true);
    private Converter valueConverter = stringConverter(false);
    private HeaderConverter headerConverter = stringHeaderConverter();
    private Function<SinkRecord, Throwable> errant = r -> null;
    private int stopAtWait = -1;

    Connector(final String scenario) {
        this.scenario = scenario;
        props.put("name", NAME);
        props.put("connector.class", "org.apache.kafka.connect.file.FileStreamSinkConnector");
        props.put("topics", "orders");
    }

    // ---- what a scenario sets ----

    Connector prop(final String key, final String value) {
        props.put(key, value);
        return this;
    }

    /** tolerance all, a DLQ "dlq" with context headers (the Rust tests' usual props). */
    Connector dlq(final boolean contextHeaders) {
        prop("errors.tolerance", "all");
        prop("errors.deadletterqueue.topic.name", "dlq");
        prop("errors.deadletterqueue.topic.replication.factor", "1");
        return prop("errors.deadletterqueue.context.headers.enable", Boolean.toString(contextHeaders));
    }

    Connector keyConverter(final Converter c) {
        keyConverter = c;
        return this;
    }

    Connector valueConverter(final Converter c) {
        valueConverter = c;
        return this;
    }

    Connector headerConverter(final HeaderConverter c) {
        headerConverter = c;
        return this;
    }

    /** Appends a transform by Kafka's properties; {@code config} pairs are key, value. */
    Connector transform(final String alias, final Class<?> type, final String... config) {
        transforms.add(alias);
        props.put("transforms", String.join(",", transforms));
        props.put("transforms." + alias + ".type", type.getName());
        for (int i = 0; i < config.length; i += 2) {
            props.put("transforms." + alias + "." + config[i], config[i + 1]);
        }
        return this;
    }

    /** Defines a predicate by Kafka's properties. */
    Connector predicate(final String alias, final Class<?> type, final String... config) {
        predicates.add(alias);
        props.put("predicates", String.join(",", predicates));
        props.put("predicates." + alias + ".type", type.getName());
        for (int i = 0; i < config.length; i += 2) {
            props.put("predicates." + alias + "." + config[i], config[i + 1]);
        }
        return this;
    }

    /** The sink reports a record as errant (ErrantRecordReporter) when this gives an error. */
    Connector errant(final Function<SinkRecord, Throwable> check) {
        errant = check;
        return this;
    }

    /** The task is stopped at the n-th backoff (0-based), before any time passes. */
    Connector stopAtWait(final int n) {
        stopAtWait = n;
        return this;
    }

    /** A record of topic-partition, at timestamp, with UTF-8 key and value (null: null). */
    Connector send(final String topic, final int partition, final long timestamp, final String key,
                   final String value, final String... headers) {
        final List<String[]> hs = new ArrayList<>();
        for (int i = 0; i < headers.length; i += 2) {
            hs.add(new String[] {headers[i], headers[i + 1]});
        }
        inputs.add(new Input(topic, partition, timestamp, utf8(key), utf8(value), hs));
        return this;
    }

    /** A record of "orders" partition 0 with these key and value bytes, no headers. */
    Connector sendBytes(final long timestamp, final byte[] key, final byte[] value) {
        inputs.add(new Input("orders", 0, timestamp, key, value, List.of()));
        return this;
    }

    Connector send(final long timestamp, final String key, final String value, final String... headers) {
        return send("orders", 0, timestamp, key, value, headers);
    }

    static byte[] utf8(final String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static StringConverter stringConverter(final boolean isKey) {
        final StringConverter c = new StringConverter();
        c.configure(Map.of(), isKey);
        return c;
    }

    static StringConverter stringHeaderConverter() {
        final StringConverter c = new StringConverter();
        c.configure(Map.of("converter.type", "header"));
        return c;
    }

    // ---- the run ----

    /** The manual clock of the operator: it moves only by the backoffs. */
    static final class ManualTime implements Time {
        long now = START_MS;

        @Override
        public long milliseconds() {
            return now;
        }

        @Override
        public long nanoseconds() {
            return now * 1_000_000L;
        }

        @Override
        public void sleep(final long ms) {
            now += ms;
        }
    }

    /** The operator's stop latch: each backoff is recorded and passes on the manual clock at once. */
    final class BackoffLatch extends CountDownLatch {
        final List<Long> waits = new ArrayList<>();
        RetryWithToleranceOperator<?> operator;

        BackoffLatch() {
            super(1);
        }

        @Override
        public boolean await(final long timeout, final TimeUnit unit) {
            final long ms = unit.toMillis(timeout);
            if (waits.size() == stopAtWait) {
                waits.add(ms);
                operator.triggerStop();
                return true;
            }
            waits.add(ms);
            time.sleep(ms);
            return false;
        }
    }

    /** Kafka's LogReporter.Sink; each line it logs is kept (its message at the time of the report). */
    static final class RecordingLogReporter implements ErrorReporter<ConsumerRecord<byte[], byte[]>> {
        final LogReporter.Sink inner;
        final Function<String, Double> metric;
        final List<String> lines = new ArrayList<>();

        RecordingLogReporter(final LogReporter.Sink inner, final Function<String, Double> metric) {
            this.inner = inner;
            this.metric = metric;
        }

        @Override
        public Future<RecordMetadata> report(final ProcessingContext<ConsumerRecord<byte[], byte[]>> context) {
            final double before = metric.apply("total-errors-logged");
            final Future<RecordMetadata> result = inner.report(context);
            if (metric.apply("total-errors-logged") > before) {
                try {
                    final Method message = LogReporter.class.getDeclaredMethod("message", ProcessingContext.class);
                    message.setAccessible(true);
                    lines.add((String) message.invoke(inner, context));
                } catch (final ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
            return result;
        }
    }

    private final ManualTime time = new ManualTime();
    private ConnectMetrics connectMetrics;
    private RetryWithToleranceOperator<ConsumerRecord<byte[], byte[]>> operator;
    private TransformationChain<ConsumerRecord<byte[], byte[]>, SinkRecord> chain;

    /** Runs the poll and returns the golden document. */
    Map<String, Object> run() throws Exception {
        final Map<String, String> workerProps = new TreeMap<>();
        workerProps.put("bootstrap.servers", "127.0.0.1:9");
        workerProps.put("key.converter", StringConverter.class.getName());
        workerProps.put("value.converter", StringConverter.class.getName());
        workerProps.put("offset.storage.file.filename", "/dev/null");
        workerProps.put("plugin.discovery", "service_load");
        final Plugins plugins = new Plugins(workerProps);
        final StandaloneConfig workerConfig = new StandaloneConfig(workerProps);
        connectMetrics = new ConnectMetrics("connect-oracle-" + scenario, workerConfig, time, "cluster");
        final ConnectorTaskId id = new ConnectorTaskId(NAME, TASK);
        final SinkConnectorConfig config = new SinkConnectorConfig(plugins, props);
        final ErrorHandlingMetrics metrics = new ErrorHandlingMetrics(id, connectMetrics);

        final BackoffLatch latch = new BackoffLatch();
        final Constructor<?> ctor = RetryWithToleranceOperator.class.getDeclaredConstructor(
            long.class, long.class, ToleranceType.class, Time.class, ErrorHandlingMetrics.class, CountDownLatch.class);
        ctor.setAccessible(true);
        @SuppressWarnings("unchecked")
        final RetryWithToleranceOperator<ConsumerRecord<byte[], byte[]>> op =
            (RetryWithToleranceOperator<ConsumerRecord<byte[], byte[]>>) ctor.newInstance(
                config.errorRetryTimeout(), config.errorMaxDelayInMillis(), config.errorToleranceType(), time, metrics, latch);
        operator = op;
        latch.operator = op;

        // The reporters in Worker.sinkTaskReporters' order: the log, then the DLQ.
        final List<ErrorReporter<ConsumerRecord<byte[], byte[]>>> reporters = new ArrayList<>();
        final RecordingLogReporter log = new RecordingLogReporter(new LogReporter.Sink(id, config, metrics), this::metric);
        reporters.add(log);
        final List<ProducerRecord<byte[], byte[]>> dlq = new ArrayList<>();
        final String dlqTopic = config.dlqTopicName();
        if (dlqTopic != null && !dlqTopic.isEmpty()) {
            reporters.add(dlqReporter(config, id, metrics, dlq));
        }
        operator.reporters(reporters);

        final List<TransformationStage<SinkRecord>> stages = config.transformationStages(plugins, id, connectMetrics);
        chain = new TransformationChain<>(stages, operator);
        final WorkerErrantRecordReporter errantReporter =
            new WorkerErrantRecordReporter(operator, keyConverter, valueConverter, headerConverter);

        // convertMessages, then deliverMessages
        final Map<TopicPartition, Long> offsets = new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
        final List<ConsumerRecord<byte[], byte[]>> consumed = new ArrayList<>();
        for (final Input in : inputs) {
            final TopicPartition tp = new TopicPartition(in.topic(), in.partition());
            final long offset = offsets.merge(tp, 1L, Long::sum) - 1;
            final RecordHeaders headers = new RecordHeaders();
            for (final String[] h : in.headers()) {
                headers.add(h[0], utf8(h[1]));
            }
            consumed.add(new ConsumerRecord<>(in.topic(), in.partition(), offset, in.timestamp(),
                TimestampType.CREATE_TIME, in.key() == null ? -1 : in.key().length,
                in.value() == null ? -1 : in.value().length, in.key(), in.value(), headers, Optional.empty()));
        }
        final List<SinkRecord> batch = new ArrayList<>();
        final List<SinkRecord> kept = new ArrayList<>();
        Throwable failure = null;
        try {
            for (final ConsumerRecord<byte[], byte[]> msg : consumed) {
                final ProcessingContext<ConsumerRecord<byte[], byte[]>> context = new ProcessingContext<>(msg);
                final SinkRecord transRecord = convertAndTransformRecord(context, msg);
                if (transRecord != null) {
                    batch.add(transRecord);
                }
            }
            if (stopAtWait < 0) {
                try {
                    // The sink's put: it keeps a record, or reports it as errant.
                    for (final SinkRecord record : batch) {
                        final Throwable error = errant.apply(record);
                        if (error == null) {
                            kept.add(record);
                        } else {
                            errantReporter.report(record, error);
                        }
                    }
                    errantReporter.maybeThrowAsyncError();
                } catch (final Throwable t) {
                    throw new ConnectException("Exiting WorkerSinkTask due to unrecoverable exception.", t);
                }
            }
        } catch (final ConnectException e) {
            failure = e;
        }

        final Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("kafka_version", "4.4.0");
        doc.put("scenario", scenario);
        doc.put("props", new LinkedHashMap<>(props));
        doc.put("converters", converters());
        final List<Object> input = new ArrayList<>();
        for (final ConsumerRecord<byte[], byte[]> r : consumed) {
            input.add(Render.consumerRecord(r));
        }
        doc.put("input", input);
        final List<Object> dlqOut = new ArrayList<>();
        for (final ProducerRecord<byte[], byte[]> r : dlq) {
            dlqOut.add(Render.producerRecord(r));
        }
        doc.put("dlq", dlqOut);
        final List<Object> keptOut = new ArrayList<>();
        for (final SinkRecord r : kept) {
            keptOut.add(Render.sinkRecord(r));
        }
        doc.put("sink_kept", keptOut);
        final Map<String, Object> metricsOut = new LinkedHashMap<>();
        for (final String name : METRICS) {
            metricsOut.put(name, metric(name));
        }
        final double last = metric("last-error-timestamp");
        // ErrorHandlingMetrics.recordErrorTimestamp reads Time.SYSTEM, not the task's Time.
        metricsOut.put("last-error-timestamp", last == 0.0 ? (Object) 0L : "wall-clock");
        doc.put("metrics", metricsOut);
        doc.put("retry_waits", waits(latch.waits, config.errorMaxDelayInMillis()));
        doc.put("log", log.lines);
        doc.put("error", failure == null ? null : Render.chain(failure));
        return doc;
    }

    static final String[] METRICS = {
        "total-record-failures",
        "total-record-errors",
        "total-records-skipped",
        "total-retries",
        "total-errors-logged",
        "deadletterqueue-produce-requests",
        "deadletterqueue-produce-failures",
    };

    /**
     * The backoffs: Kafka's {@code backoff(attempt, deadline)} waits 300 << (attempt - 1) ms, and
     * once that passes errors.retry.delay.max.ms a random time below the maximum
     * (ThreadLocalRandom): such a wait is checked to be below the maximum and written as
     * {@code "random below <max>"}, so that the file is the same every run.
     */
    private static List<Object> waits(final List<Long> waits, final long max) {
        final List<Object> out = new ArrayList<>();
        for (int i = 0; i < waits.size(); i++) {
            final long doubled = 300L << i;
            final long w = waits.get(i);
            if (doubled > max) {
                if (w < 0 || w >= max) {
                    throw new IllegalStateException("wait " + w + " not below errors.retry.delay.max.ms " + max);
                }
                out.add("random below " + max);
            } else {
                out.add(w);
            }
        }
        return out;
    }

    private Map<String, Object> converters() {
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("key", keyConverter.getClass().getName());
        out.put("value", valueConverter.getClass().getName());
        out.put("header", headerConverter.getClass().getName());
        return out;
    }

    double metric(final String name) {
        for (final Map.Entry<org.apache.kafka.common.MetricName, KafkaMetric> e
                : connectMetrics.metrics().metrics().entrySet()) {
            if (e.getKey().group().equals("task-error-metrics") && e.getKey().name().equals(name)) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        throw new IllegalStateException("no metric " + name);
    }

    @SuppressWarnings("unchecked")
    private static DeadLetterQueueReporter dlqReporter(final SinkConnectorConfig config, final ConnectorTaskId id,
                                                       final ErrorHandlingMetrics metrics,
                                                       final List<ProducerRecord<byte[], byte[]>> sent) throws Exception {
        final KafkaProducer<byte[], byte[]> producer = mock(KafkaProducer.class);
        when(producer.send(any(), any())).thenAnswer(invocation -> {
            final ProducerRecord<byte[], byte[]> record = invocation.getArgument(0);
            sent.add(record);
            final RecordMetadata metadata = new RecordMetadata(
                new TopicPartition(record.topic(), 0), sent.size() - 1L, 0, 0L, 0, 0);
            final Callback callback = invocation.getArgument(1);
            callback.onCompletion(metadata, null);
            return CompletableFuture.completedFuture(metadata);
        });
        final Constructor<DeadLetterQueueReporter> ctor = DeadLetterQueueReporter.class.getDeclaredConstructor(
            KafkaProducer.class, SinkConnectorConfig.class, ConnectorTaskId.class, ErrorHandlingMetrics.class);
        ctor.setAccessible(true);
        return ctor.newInstance(producer, config, id, metrics);
    }

    /** A copy of WorkerSinkTask.convertAndTransformRecord (4.4.0), without the class loader swaps. */
    private SinkRecord convertAndTransformRecord(final ProcessingContext<ConsumerRecord<byte[], byte[]>> context,
                                                 final ConsumerRecord<byte[], byte[]> msg) {
        final SchemaAndValue keyAndSchema = operator.execute(context,
            () -> keyConverter.toConnectData(msg.topic(), msg.headers(), msg.key()),
            Stage.KEY_CONVERTER, keyConverter.getClass());
        final SchemaAndValue valueAndSchema = operator.execute(context,
            () -> valueConverter.toConnectData(msg.topic(), msg.headers(), msg.value()),
            Stage.VALUE_CONVERTER, valueConverter.getClass());
        final Headers headers = operator.execute(context, () -> convertHeadersFor(msg),
            Stage.HEADER_CONVERTER, headerConverter.getClass());
        if (context.failed()) {
            return null;
        }
        final Long timestamp = msg.timestamp() == -1 ? null : msg.timestamp();
        final SinkRecord origRecord = new SinkRecord(msg.topic(), msg.partition(),
            keyAndSchema.schema(), keyAndSchema.value(),
            valueAndSchema.schema(), valueAndSchema.value(),
            msg.offset(), timestamp, msg.timestampType(), headers);
        final SinkRecord transformedRecord = chain.apply(context, origRecord);
        return transformedRecord == null ? null : new InternalSinkRecord(context, transformedRecord);
    }

    private Headers convertHeadersFor(final ConsumerRecord<byte[], byte[]> record) {
        final Headers result = new ConnectHeaders();
        for (final Header h : record.headers()) {
            result.add(h.key(), headerConverter.toConnectHeader(record.topic(), h.key(), h.value()));
        }
        return result;
    }

    static String hex(final byte[] bytes) {
        return bytes == null ? null : HexFormat.of().formatHex(bytes);
    }

    /** The bytes as UTF-8 text, or null when they are not valid UTF-8. */
    static String text(final byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (final CharacterCodingException e) {
            return null;
        }
    }
}
