package compat.connect;

import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.transforms.Transformation;

/**
 * A transform whose code fails with a plain Java exception, IllegalStateException("boom"), on
 * the value "boom", and passes other records on: what a bug in a custom transform looks like.
 * Registered in META-INF/services, as {@link Flaky}.
 */
public final class Boom implements Transformation<SinkRecord> {
    @Override
    public void configure(final Map<String, ?> configs) {}

    @Override
    public SinkRecord apply(final SinkRecord record) {
        if ("boom".equals(record.value())) {
            throw new IllegalStateException("boom");
        }
        return record;
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef();
    }

    @Override
    public void close() {}
}
