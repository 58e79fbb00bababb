package compat.connect;

import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.transforms.Transformation;

/**
 * A transform that fails with RetriableException("lookup service unavailable") on its first
 * {@code failures} calls (-1: always), then passes records on unchanged: what the retry
 * scenarios retry. Registered in META-INF/services so that Kafka's Plugins find it by class
 * name, as every other transform of the scenarios.
 */
public final class Flaky implements Transformation<SinkRecord> {
    private static final ConfigDef CONFIG = new ConfigDef()
        .define("failures", ConfigDef.Type.INT, 0, ConfigDef.Importance.HIGH, "Calls that fail retriably (-1: all).");

    private int failures;
    private int calls;

    @Override
    public void configure(final Map<String, ?> configs) {
        failures = Integer.parseInt(String.valueOf(configs.get("failures")));
    }

    @Override
    public SinkRecord apply(final SinkRecord record) {
        calls++;
        if (failures < 0 || calls <= failures) {
            throw new RetriableException("lookup service unavailable");
        }
        return record;
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public void close() {}
}
