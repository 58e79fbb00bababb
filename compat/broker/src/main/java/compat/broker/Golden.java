package compat.broker;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;

/**
 * Byte-exact reference data written by Kafka's own classes (kafka-clients 4.4.0):
 * {@code batches.json} (v2 record batches from {@link MemoryRecordsBuilder}) and
 * {@code partitions.json} (the default partitioner's choice per key). See compat/broker/README.md.
 */
final class Golden {
    private Golden() {}

    /** 2023-11-14T22:13:20Z: the base of every explicit timestamp. */
    static final long T0 = 1_700_000_000_000L;

    static void write(final Path dir) throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("batches.json"), Json.write(batches()), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("partitions.json"), Json.write(partitions()), StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- batches

    /** One record to append: offset (absolute), timestamp, key, value, headers. */
    record Rec(long offset, long timestamp, byte[] key, byte[] value, Header[] headers) {}

    /** The builder's inputs; see {@link #build}. */
    static final class Case {
        final String name;
        long baseOffset = 0;
        int partitionLeaderEpoch = 0;
        TimestampType timestampType = TimestampType.CREATE_TIME;
        long logAppendTime = RecordBatch.NO_TIMESTAMP;
        long producerId = RecordBatch.NO_PRODUCER_ID;
        short producerEpoch = RecordBatch.NO_PRODUCER_EPOCH;
        int baseSequence = RecordBatch.NO_SEQUENCE;
        boolean transactional = false;
        boolean control = false;
        long deleteHorizonMs = RecordBatch.NO_TIMESTAMP;
        final List<Rec> records = new ArrayList<>();
        /** Set for the control case, which is written by MemoryRecords.withEndTransactionMarker. */
        EndTransactionMarker marker;
        long markerTimestamp;

        Case(final String name) {
            this.name = name;
        }

        Case rec(final long offset, final long timestamp, final String key, final String value, final Header... headers) {
            return rec(offset, timestamp, utf8(key), utf8(value), headers);
        }

        Case rec(final long offset, final long timestamp, final byte[] key, final byte[] value, final Header... headers) {
            records.add(new Rec(offset, timestamp, key, value, headers));
            return this;
        }
    }

    static byte[] utf8(final String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static Header h(final String key, final String value) {
        return new RecordHeader(key, utf8(value));
    }

    static List<Case> cases() {
        final List<Case> cases = new ArrayList<>();
        Case c;

        c = new Case("single_record");
        c.rec(0, T0, "k", "v");
        cases.add(c);

        c = new Case("several_records_increasing_timestamps");
        c.baseOffset = 100;
        c.rec(100, T0, "k1", "v1").rec(101, T0 + 5, "k2", "v2").rec(102, T0 + 1000, "k3", "v3");
        cases.add(c);

        c = new Case("several_records_decreasing_timestamps");
        c.baseOffset = 7;
        // The batch's base timestamp is the first record's, its max timestamp the largest; the
        // later records get negative timestamp deltas (zigzag varints).
        c.rec(7, T0 + 2000, "a", "1").rec(8, T0 + 1000, "b", "2").rec(9, T0, "c", "3").rec(10, T0 + 1500, "d", "4");
        cases.add(c);

        c = new Case("null_key");
        c.rec(0, T0, (String) null, "value-without-key");
        cases.add(c);

        c = new Case("null_value_tombstone");
        c.rec(0, T0, "deleted-key", null);
        cases.add(c);

        c = new Case("null_key_and_null_value");
        c.rec(0, T0, (String) null, null);
        cases.add(c);

        c = new Case("empty_key_and_empty_value");
        c.rec(0, T0, "", "");
        cases.add(c);

        c = new Case("headers");
        c.rec(0, T0, "k", "v", h("h1", "x"), h("empty", ""), h("null-value", null), h("h1", "repeated"), h("ünï", "çødé"));
        c.rec(1, T0 + 1, "k2", "v2", h("only", "one"));
        cases.add(c);

        c = new Case("non_idempotent");
        c.rec(0, T0, "k1", "v1").rec(1, T0 + 1, "k2", "v2");
        cases.add(c);

        c = new Case("idempotent");
        c.baseOffset = 42;
        c.producerId = 1234;
        c.producerEpoch = 5;
        c.baseSequence = 10;
        c.rec(42, T0, "k1", "v1").rec(43, T0 + 1, "k2", "v2").rec(44, T0 + 2, "k3", "v3");
        cases.add(c);

        c = new Case("transactional");
        c.baseOffset = 3;
        c.producerId = 1234;
        c.producerEpoch = 5;
        c.baseSequence = 0;
        c.transactional = true;
        c.rec(3, T0, "tk1", "tv1").rec(4, T0 + 1, "tk2", "tv2");
        cases.add(c);

        c = new Case("control_commit_marker");
        c.baseOffset = 5;
        c.partitionLeaderEpoch = 0;
        c.producerId = 1234;
        c.producerEpoch = 5;
        c.transactional = true;
        c.control = true;
        c.marker = new EndTransactionMarker(ControlRecordType.COMMIT, 7);
        c.markerTimestamp = T0 + 10;
        cases.add(c);

        c = new Case("control_abort_marker");
        c.baseOffset = 9;
        c.partitionLeaderEpoch = 3;
        c.producerId = 99;
        c.producerEpoch = 1;
        c.transactional = true;
        c.control = true;
        c.marker = new EndTransactionMarker(ControlRecordType.ABORT, 0);
        c.markerTimestamp = T0 + 20;
        cases.add(c);

        c = new Case("log_append_time");
        c.baseOffset = 20;
        c.timestampType = TimestampType.LOG_APPEND_TIME;
        c.logAppendTime = T0 + 999_999;
        c.rec(20, T0, "k1", "v1").rec(21, T0 + 7, "k2", "v2");
        cases.add(c);

        c = new Case("delete_horizon");
        c.baseOffset = 0;
        c.deleteHorizonMs = T0 + 86_400_000L;
        // As the log cleaner writes it: the retained records of a cleaned batch, with gaps and a
        // tombstone; the base timestamp is the delete horizon, the deltas are relative to it.
        c.rec(2, T0 + 2, "k1", "v1").rec(5, T0 + 5, "k2", null).rec(6, T0 + 6, "k3", "v3");
        cases.add(c);

        c = new Case("offset_gaps");
        c.baseOffset = 10;
        c.rec(10, T0, "a", "1").rec(13, T0 + 3, "b", "2").rec(17, T0 + 7, "c", "3").rec(300, T0 + 290, "d", "4");
        cases.add(c);

        c = new Case("large_value");
        final StringBuilder big = new StringBuilder();
        for (int i = 0; i < 300; i++) {
            big.append((char) ('a' + i % 26));
        }
        final StringBuilder bigKey = new StringBuilder();
        for (int i = 0; i < 130; i++) {
            bigKey.append((char) ('A' + i % 26));
        }
        c.rec(0, T0, bigKey.toString(), big.toString(), h("big", big.substring(0, 200)));
        cases.add(c);

        c = new Case("many_records");
        c.baseOffset = 1000;
        for (int i = 0; i < 70; i++) {
            c.rec(1000 + i, T0 + 100L * i, "key-" + i, "value-" + i);
        }
        cases.add(c);

        c = new Case("partition_leader_epoch");
        c.baseOffset = 5;
        c.partitionLeaderEpoch = 17;
        c.rec(5, T0, "k", "v");
        cases.add(c);

        c = new Case("binary_key_and_value");
        c.rec(0, T0, new byte[] {0, (byte) 0xff, (byte) 0x80, 0x7f}, new byte[] {(byte) 0xfe, 0, 1});
        cases.add(c);

        c = new Case("timestamp_zero_and_negative_delta");
        c.rec(0, 0, "zero", "t0").rec(1, -1, "minus-one", "no-timestamp-sentinel").rec(2, 1, "one", "t1");
        cases.add(c);

        return cases;
    }

    static MemoryRecords build(final Case c) {
        if (c.marker != null) {
            return MemoryRecords.withEndTransactionMarker(
                c.baseOffset, c.markerTimestamp, c.partitionLeaderEpoch, c.producerId, c.producerEpoch, c.marker);
        }
        final MemoryRecordsBuilder b;
        if (c.deleteHorizonMs != RecordBatch.NO_TIMESTAMP) {
            final ByteBuffer buffer = ByteBuffer.allocate(1024);
            b = new MemoryRecordsBuilder(
                new ByteBufferOutputStream(buffer), RecordBatch.MAGIC_VALUE_V2, Compression.NONE, c.timestampType,
                c.baseOffset, c.logAppendTime, c.producerId, c.producerEpoch, c.baseSequence, c.transactional,
                c.control, c.partitionLeaderEpoch, buffer.capacity(), c.deleteHorizonMs);
        } else {
            b = MemoryRecords.builder(
                ByteBuffer.allocate(1024), RecordBatch.MAGIC_VALUE_V2, Compression.NONE, c.timestampType,
                c.baseOffset, c.logAppendTime, c.producerId, c.producerEpoch, c.baseSequence, c.transactional,
                c.control, c.partitionLeaderEpoch);
        }
        for (final Rec r : c.records) {
            b.appendWithOffset(r.offset(), r.timestamp(), r.key(), r.value(), r.headers());
        }
        return b.build();
    }

    static List<Object> batches() {
        final List<Object> out = new ArrayList<>();
        for (final Case c : cases()) {
            final MemoryRecords records = build(c);
            final ByteBuffer buf = records.buffer();
            final byte[] bytes = new byte[buf.remaining()];
            buf.get(bytes);

            final Iterator<MutableRecordBatch> it = records.batches().iterator();
            final MutableRecordBatch batch = it.next();
            if (it.hasNext()) {
                throw new IllegalStateException(c.name + ": more than one batch");
            }
            batch.ensureValid();
            if (!(batch instanceof DefaultRecordBatch)) {
                throw new IllegalStateException(c.name + ": not a v2 batch");
            }

            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", c.name);
            m.put("base_offset", c.baseOffset);
            m.put("partition_leader_epoch", c.partitionLeaderEpoch);
            m.put("timestamp_type", c.timestampType == TimestampType.LOG_APPEND_TIME ? "LogAppendTime" : "CreateTime");
            m.put("log_append_time", c.logAppendTime == RecordBatch.NO_TIMESTAMP ? null : c.logAppendTime);
            m.put("producer_id", c.producerId);
            m.put("producer_epoch", (int) c.producerEpoch);
            m.put("base_sequence", c.baseSequence);
            m.put("transactional", c.transactional);
            m.put("control", c.control);
            m.put("delete_horizon_ms", c.deleteHorizonMs == RecordBatch.NO_TIMESTAMP ? null : c.deleteHorizonMs);

            // The records as Kafka reads them back from the bytes (for the control batch this is
            // the marker record Kafka wrote: key = version + type, value = version + coordinator epoch).
            final List<Object> recs = new ArrayList<>();
            int i = 0;
            for (final Record r : batch) {
                final Map<String, Object> rm = new LinkedHashMap<>();
                rm.put("offset_delta", r.offset() - batch.baseOffset());
                if (c.marker == null) {
                    final Rec in = c.records.get(i);
                    if (r.offset() != in.offset()) {
                        throw new IllegalStateException(c.name + ": offset " + r.offset() + " != " + in.offset());
                    }
                    // The input timestamp (under LogAppendTime Kafka reads every record back
                    // with the batch's log append time; the record's own delta is still written).
                    rm.put("timestamp", in.timestamp());
                } else {
                    rm.put("timestamp", r.timestamp());
                }
                rm.put("key_hex", r.hasKey() ? hex(r.key()) : null);
                rm.put("value_hex", r.hasValue() ? hex(r.value()) : null);
                final List<Object> hs = new ArrayList<>();
                for (final Header hd : r.headers()) {
                    final Map<String, Object> hm = new LinkedHashMap<>();
                    hm.put("key", hd.key());
                    hm.put("value_hex", hd.value() == null ? null : hex(hd.value()));
                    hs.add(hm);
                }
                rm.put("headers", hs);
                rm.put("read_timestamp", r.timestamp());
                recs.add(rm);
                i++;
            }
            if (c.marker == null && i != c.records.size()) {
                throw new IllegalStateException(c.name + ": read back " + i + " records of " + c.records.size());
            }
            m.put("records", recs);

            // The v2 header fields as written, read from the bytes (cross-checked with Kafka's getters).
            final ByteBuffer bb = ByteBuffer.wrap(bytes);
            final Map<String, Object> hdr = new LinkedHashMap<>();
            hdr.put("batch_length", bb.getInt(8));
            hdr.put("magic", (int) bb.get(16));
            hdr.put("crc", Integer.toUnsignedLong(bb.getInt(17)));
            hdr.put("attributes", (int) bb.getShort(21));
            hdr.put("last_offset_delta", bb.getInt(23));
            hdr.put("base_timestamp", bb.getLong(27));
            hdr.put("max_timestamp", bb.getLong(35));
            hdr.put("records_count", bb.getInt(57));
            check(c, "crc", batch.checksum(), Integer.toUnsignedLong(bb.getInt(17)));
            check(c, "size", batch.sizeInBytes(), bytes.length);
            check(c, "batch_length", bytes.length - 12, bb.getInt(8));
            check(c, "last_offset", batch.lastOffset(), batch.baseOffset() + bb.getInt(23));
            check(c, "max_timestamp", batch.maxTimestamp(), bb.getLong(35));
            check(c, "producer_id", batch.producerId(), c.producerId);
            check(c, "partition_leader_epoch", batch.partitionLeaderEpoch(), c.partitionLeaderEpoch);
            final OptionalLong dh = batch.deleteHorizonMs();
            check(c, "delete_horizon", dh.isPresent() ? dh.getAsLong() : -1, c.deleteHorizonMs);
            m.put("header", hdr);
            m.put("bytes_hex", hex(bytes));
            out.add(m);
        }
        return out;
    }

    private static void check(final Case c, final String what, final long a, final long b) {
        if (a != b) {
            throw new IllegalStateException(c.name + ": " + what + " " + a + " != " + b);
        }
    }

    // ---------------------------------------------------------------- partitions

    static final int[] PARTITION_COUNTS = {1, 2, 3, 6, 12, 100};

    static List<byte[]> partitionKeys() {
        final List<byte[]> keys = new ArrayList<>();
        // Lengths 0..20 of one ASCII alphabet prefix: every murmur2 tail case (len % 4) many times.
        final String alphabet = "abcdefghijklmnopqrstuvwxyz";
        for (int len = 0; len <= 20; len++) {
            keys.add(utf8(alphabet.substring(0, len)));
        }
        for (final String s : new String[] {
            "key", "key-0", "key-1", "key-2", "key-29", "order-1001", "customer:42", "Kafka", "streams",
            "hello world", "The quick brown fox jumps over the lazy dog", "0", "-1", " ", "\t", "k1", "k2", "k3",
            "k4", "k5",
            // UTF-8, non-ASCII (2-, 3- and 4-byte sequences).
            "ü", "schön", "ключ", "キー", "鍵🔑", "🙂", "Ωmega-ß"
        }) {
            keys.add(utf8(s));
        }
        // Binary keys, with bytes >= 0x80 (murmur2 masks each byte with 0xff).
        keys.add(new byte[] {0});
        keys.add(new byte[] {(byte) 0xff});
        keys.add(new byte[] {(byte) 0xff, (byte) 0xff});
        keys.add(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff});
        keys.add(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
        keys.add(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});
        keys.add(new byte[] {(byte) 0x80, 0x7f, (byte) 0x80, 0x7f, 0x01, (byte) 0xfe, 0x00});
        keys.add(new byte[] {0, 0, 0, 0, 0, 0, 0, 0});
        keys.add(new byte[] {0, 0, 0, 1});
        keys.add(new byte[] {1, 0, 0, 0});
        final byte[] all = new byte[19];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) (0xed + i * 7);
        }
        keys.add(all);
        // Big-endian longs and ints, as LongSerializer / IntegerSerializer write them.
        keys.add(ByteBuffer.allocate(8).putLong(42L).array());
        keys.add(ByteBuffer.allocate(8).putLong(-1L).array());
        keys.add(ByteBuffer.allocate(4).putInt(7).array());
        keys.add(ByteBuffer.allocate(4).putInt(Integer.MIN_VALUE).array());
        return keys;
    }

    static List<Object> partitions() {
        final List<Object> out = new ArrayList<>();
        for (final byte[] key : partitionKeys()) {
            final int murmur = Utils.murmur2(key);
            for (final int n : PARTITION_COUNTS) {
                final int p = BuiltInPartitioner.partitionForKey(key, n);
                if (p != Utils.toPositive(murmur) % n) {
                    throw new IllegalStateException("partitionForKey disagrees with toPositive(murmur2) % n");
                }
                final Map<String, Object> m = new LinkedHashMap<>();
                m.put("key_hex", hex(key));
                m.put("num_partitions", n);
                m.put("murmur2", murmur);
                m.put("partition", p);
                out.add(m);
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- hex

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    static String hex(final byte[] b) {
        final StringBuilder sb = new StringBuilder(b.length * 2);
        for (final byte x : b) {
            sb.append(HEX[(x >> 4) & 0xf]).append(HEX[x & 0xf]);
        }
        return sb.toString();
    }

    static String hex(final ByteBuffer buf) {
        final ByteBuffer d = buf.duplicate();
        final byte[] b = new byte[d.remaining()];
        d.get(b);
        return hex(b);
    }
}
