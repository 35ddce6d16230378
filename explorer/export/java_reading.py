"""The part a Java program shares with the Python ones: reading the user's file as the explorer read it
(``replay.READING``, in Java), for a program that has no pandas: Flink's Java job (``flink_java_job``).

Text, not code: the program is one source file the user keeps (``java Job.java``), so it carries its own copy; it
uses the program's constants READER, EVENT_TIME / ARRIVAL_TIME (column, kind, unit, zone) and Flink's shaded
Jackson for JSON. ``tests/test_verify_flink.py`` holds it against the explorer's loader (``Job.java --read``).
"""

from __future__ import annotations

JAVA_READING = r'''
    /** The file as a table of strings: CSV (RFC 4180 quoting), or JSON lines or a JSON array with nested records
     *  flattened to dotted columns (payload.after.ts); gzip when the name ends in .gz (.bz2, .zst refused). */
    static List<java.util.Map<String, String>> readEvents(Path path) throws IOException {
        if (!READER.equals("csv") && !READER.equals("json")) {
            throw new IOException(READER + " files have no reader among Flink's jars; export the events as CSV");
        }
        String name = path.toString().toLowerCase();
        if (name.endsWith(".bz2") || name.endsWith(".zst")) {
            throw new IOException(path + ": bzip2 and Zstandard have no reader among Flink's jars; decompress it or gzip it");
        }
        byte[] bytes = Files.readAllBytes(path);
        if (name.endsWith(".gz")) {
            bytes = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(bytes)).readAllBytes();
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        if (text.startsWith("\uFEFF")) text = text.substring(1);
        List<java.util.Map<String, String>> table = new ArrayList<>();
        if (READER.equals("json")) {
            ObjectMapper mapper = new ObjectMapper();
            List<JsonNode> records = new ArrayList<>();
            if (text.strip().startsWith("[")) mapper.readTree(text).forEach(records::add);
            else for (String line : text.split("\n")) if (!line.isBlank()) records.add(mapper.readTree(line));
            for (JsonNode record : records) {
                java.util.Map<String, String> row = new java.util.HashMap<>();
                flatten("", record, row);
                table.add(row);
            }
            return table;
        }
        List<List<String>> records = new ArrayList<>();
        List<String> record = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < text.length() && text.charAt(i + 1) == '"') { field.append('"'); i++; }
                else if (c == '"') quoted = false;
                else field.append(c);
            } else if (c == '"') quoted = true;
            else if (c == ',') { record.add(field.toString()); field.setLength(0); }
            else if (c == '\n' || c == '\r') {
                if (c == '\r' && i + 1 < text.length() && text.charAt(i + 1) == '\n') i++;
                record.add(field.toString());
                field.setLength(0);
                if (!(record.size() == 1 && record.get(0).isEmpty())) records.add(record);  // blank lines skipped
                record = new ArrayList<>();
            } else field.append(c);
        }
        if (field.length() > 0 || !record.isEmpty()) { record.add(field.toString()); records.add(record); }
        List<String> header = records.get(0);
        for (List<String> r : records.subList(1, records.size())) {
            java.util.Map<String, String> row = new java.util.HashMap<>();
            for (int j = 0; j < header.size(); j++) row.put(header.get(j), j < r.size() ? r.get(j) : "");
            table.add(row);
        }
        return table;
    }

    /** A JSON record's fields as columns, a nested object's as dotted ones. */
    static void flatten(String prefix, JsonNode node, java.util.Map<String, String> row) {
        Iterator<java.util.Map.Entry<String, JsonNode>> fields = node.fields();
        while (fields.hasNext()) {
            java.util.Map.Entry<String, JsonNode> f = fields.next();
            JsonNode v = f.getValue();
            if (v.isObject() && v.size() > 0) flatten(prefix + f.getKey() + ".", v, row);
            else row.put(prefix + f.getKey(), v.isValueNode() ? v.asText() : v.toString());
        }
    }

    static final java.util.regex.Pattern ZONED = java.util.regex.Pattern.compile(
        "\\d:\\d\\d(?::\\d\\d(?:[.,]\\d+)?)?\\s*(?:Z|[+-]\\d\\d(?::?\\d\\d)?)$", java.util.regex.Pattern.CASE_INSENSITIVE);

    /** A time as µs, read as the explorer read it: ISO 8601 (zoned; naive in the zone given, or UTC; a repeated
     *  local hour at its first occurrence, a skipped one an error) or a number in its unit, half to even. */
    static long micros(String value, String[] format) {
        String v = value.strip();
        if (format[1].equals("iso")) {
            String t = v.replace(',', '.');
            Instant at;
            if (ZONED.matcher(t).find()) {
                t = t.replaceAll("\\s+([zZ]|[+-]\\d\\d(:?\\d\\d)?)$", "$1").replaceAll("[zZ]$", "+00:00");
                t = t.replaceAll("([+-]\\d\\d)(\\d\\d)$", "$1:$2").replaceAll("([+-]\\d\\d)$", "$1:00");
                at = OffsetDateTime.parse(t.replaceFirst("^(\\d{4}-\\d\\d-\\d\\d)[ ]", "$1T")).toInstant();
            } else {
                String local = t.replaceFirst("^(\\d{4}-\\d\\d-\\d\\d)[ ]", "$1T");
                LocalDateTime moment = local.length() == 10 ? LocalDate.parse(local).atStartOfDay()
                    : LocalDateTime.parse(local);
                String zone = format.length > 3 ? format[3] : "";
                if (zone == null || zone.isEmpty()) at = moment.toInstant(ZoneOffset.UTC);
                else {
                    java.time.ZonedDateTime zoned = moment.atZone(java.time.ZoneId.of(zone));  // overlap: earlier
                    if (!zoned.toLocalDateTime().equals(moment)) {
                        throw new IllegalArgumentException(v + " never happened in " + zone + " (the clocks skipped it)");
                    }
                    at = zoned.toInstant();
                }
            }
            BigDecimal nanos = BigDecimal.valueOf(at.getEpochSecond()).multiply(BigDecimal.valueOf(1_000_000_000L))
                .add(BigDecimal.valueOf(at.getNano()));
            return nanos.divide(BigDecimal.valueOf(1000)).setScale(0, RoundingMode.HALF_EVEN).longValueExact();
        }
        if (format[1].equals("timestamp")) {
            throw new IllegalArgumentException("typed timestamp columns have no reader here; export them as ISO text");
        }
        BigDecimal per = format[2].equals("s") ? BigDecimal.valueOf(1_000_000) : format[2].equals("ms")
            ? BigDecimal.valueOf(1000) : format[2].equals("ns") ? new BigDecimal("0.001") : BigDecimal.ONE;
        return new BigDecimal(v).multiply(per).setScale(0, RoundingMode.HALF_EVEN).longValueExact();
    }

'''
