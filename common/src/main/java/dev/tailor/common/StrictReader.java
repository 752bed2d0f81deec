package dev.tailor.common;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.deser.DeserializationProblemHandler;
import com.fasterxml.jackson.databind.deser.std.NumberDeserializers;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.databind.util.ClassUtil;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * The one strict way the project reads configuration and input documents, JSON or YAML, on Jackson:
 * unknown fields, duplicate keys, trailing content and scalars of the wrong type ({@code "30"} for a
 * number, {@code 1} for a boolean, {@code 2.5} for a count, {@code ~} for a primitive) are errors,
 * because a typo must not silently become data; and the words for Jackson's errors: the field path
 * ({@code tenants[2].bursts.multiplier}), the line, the value and what the field takes, as a
 * {@link Problem}, never a Java type name or a stack trace.
 *
 * <p>Every reader of the project builds on {@link #json()} or {@link #yaml()} and words its errors
 * with {@link #problem}; what a document means (defaults, ranges, references) stays with its reader,
 * which reports all its problems at once. A reader that binds the text in one go reads on past unknown
 * fields with {@link UnknownFields}, which collects them for that report instead of stopping at the first.
 *
 * <p>YAML's non-finite floats ({@code .nan}, {@code .inf}) are valid YAML that Jackson's number parser
 * refuses as "malformed"; {@link #nonFiniteValue} recognises them so readers can say "a finite number".
 */
public final class StrictReader {

    private static final Pattern NOT_FINITE = Pattern.compile("Malformed numeric value '([-+]?\\.(?i:nan|inf))'");

    private StrictReader() {}

    /**
     * Whether {@code file} is to be read as strict JSON, with JSON's words in its errors: its name ends in
     * {@code .json} (any case). Every other file is read as YAML.
     */
    public static boolean isJsonFile(java.nio.file.Path file) {
        return file.getFileName() != null
                && file.getFileName()
                        .toString()
                        .toLowerCase(java.util.Locale.ROOT)
                        .endsWith(".json");
    }

    /**
     * A strict JSON mapper. NaN and Infinity literals parse, so that the reader's validation can name
     * them; strings convert only to strings; integers to numbers; floats only to floating fields.
     * Callers add their output settings with {@code json().rebuild()}.
     */
    public static JsonMapper json() {
        JsonMapper mapper = JsonMapper.builder()
                .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                .addModule(NO_TEXT_FOR_FLOATS)
                .addHandler(new ShowWrongStructure())
                .build();
        strictCoercions(mapper);
        return mapper;
    }

    /**
     * A strict YAML mapper (JSON is YAML too): duplicate keys, unknown fields, trailing documents,
     * floats for whole numbers and nulls for primitives are errors; a quoted {@code "30"} is not a
     * number and {@code "true"} not a boolean.
     */
    public static YAMLMapper yaml() {
        return YAMLMapper.builder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                .addModule(NO_TEXT_FOR_FLOATS)
                .addHandler(new ShowWrongStructure())
                .build();
    }

    /**
     * Unknown fields collected, not thrown: a read with {@link #reader} goes on past each unknown field (its value
     * skipped) and records it as {@link #problem} would word it, {@code replicas[0].rps: unknown field (expected
     * one of component, cpuCores, ...)}, so that its reader reports them with the document's other problems.
     * They stay errors: a reader reports {@link #problems()} with the document's other problems, and does not go
     * on with the value read while there is any. One instance per read.
     */
    public static final class UnknownFields extends DeserializationProblemHandler {

        private final List<Problem> found = new ArrayList<>();

        /** {@code mapper}'s reader for {@code type}, collecting the unknown fields here. */
        public ObjectReader reader(ObjectMapper mapper, Class<?> type) {
            return mapper.readerFor(type).withHandler(this);
        }

        /** The unknown fields read so far, in the order they were met, each with the known fields of its place. */
        public List<Problem> problems() {
            return List.copyOf(found);
        }

        @Override
        public boolean handleUnknownProperty(
                DeserializationContext context,
                JsonParser parser,
                JsonDeserializer<?> deserializer,
                Object beanOrClass,
                String name)
                throws java.io.IOException {
            found.add(new Problem(
                    fieldPath(context, parser, name),
                    Problem.UNKNOWN_FIELD,
                    "one of " + sorted(deserializer == null ? List.of() : deserializer.getKnownPropertyNames())));
            parser.skipChildren();
            return true;
        }

        /**
         * The path of unknown field {@code name}. Read as it comes, the parser stands at its value (inside it, at
         * an array's or an object's start). A record's unknown fields are kept aside until its fields are all read
         * and handed over again from that copy, which knows no path: the document's own parser then stands at the
         * record's end (its holder's field or item is the record's path) or, when the record was complete early,
         * at its next field's name.
         */
        private static String fieldPath(DeserializationContext context, JsonParser parser, String name) {
            JsonParser document = context.getParser();
            if (parser == document || document == null) {
                JsonStreamContext at = parser.getParsingContext();
                JsonToken value = parser.currentToken();
                return path(value == JsonToken.START_ARRAY || value == JsonToken.START_OBJECT ? at.getParent() : at);
            }
            JsonStreamContext at = document.getParsingContext();
            String record = path(document.currentToken() == JsonToken.FIELD_NAME ? at.getParent() : at);
            return record.isEmpty() ? name : record + "." + name;
        }
    }

    /**
     * Floating fields that take no text: Jackson reads the texts {@code "NaN"}, {@code "Infinity"} and
     * {@code "-Infinity"} as the numbers they name whatever the coercion settings say, so a quoted {@code "NaN"}
     * would pass for a number where a quoted {@code "30"} does not. Every text is refused alike, as the text
     * it is ({@link #problem} shows it as written, quoted).
     */
    private static final SimpleModule NO_TEXT_FOR_FLOATS = new SimpleModule("no-text-for-floats")
            .addDeserializer(Double.class, new NoTextDouble(Double.class, null))
            .addDeserializer(Double.TYPE, new NoTextDouble(Double.TYPE, 0.0))
            .addDeserializer(Float.class, new NoTextFloat(Float.class, null))
            .addDeserializer(Float.TYPE, new NoTextFloat(Float.TYPE, 0.0f));

    private static final class NoTextDouble extends NumberDeserializers.DoubleDeserializer {
        NoTextDouble(Class<Double> type, Double empty) {
            super(type, empty);
        }

        @Override
        public Double deserialize(JsonParser p, DeserializationContext context) throws java.io.IOException {
            if (p.hasToken(JsonToken.VALUE_STRING)) {
                return (Double) refuseText(p, context, handledType());
            }
            return super.deserialize(p, context);
        }
    }

    private static final class NoTextFloat extends NumberDeserializers.FloatDeserializer {
        NoTextFloat(Class<Float> type, Float empty) {
            super(type, empty);
        }

        @Override
        public Float deserialize(JsonParser p, DeserializationContext context) throws java.io.IOException {
            if (p.hasToken(JsonToken.VALUE_STRING)) {
                return (Float) refuseText(p, context, handledType());
            }
            return super.deserialize(p, context);
        }
    }

    private static Object refuseText(JsonParser p, DeserializationContext context, Class<?> type)
            throws java.io.IOException {
        return context.reportInputMismatch(
                type, "Cannot coerce String value (\"%s\") to `%s` value", p.getText(), type.getName());
    }

    private static void strictCoercions(ObjectMapper mapper) {
        for (LogicalType type :
                List.of(LogicalType.Float, LogicalType.Integer, LogicalType.Boolean, LogicalType.Textual)) {
            mapper.coercionConfigFor(type)
                    .setCoercion(
                            CoercionInputShape.String,
                            type == LogicalType.Textual ? CoercionAction.TryConvert : CoercionAction.Fail)
                    .setCoercion(
                            CoercionInputShape.Integer,
                            type == LogicalType.Float || type == LogicalType.Integer
                                    ? CoercionAction.TryConvert
                                    : CoercionAction.Fail)
                    .setCoercion(
                            CoercionInputShape.Float,
                            type == LogicalType.Float ? CoercionAction.TryConvert : CoercionAction.Fail)
                    .setCoercion(
                            CoercionInputShape.Boolean,
                            type == LogicalType.Boolean ? CoercionAction.TryConvert : CoercionAction.Fail);
        }
    }

    /** The field path of a mapping error, e.g. {@code nodes[1].speed}, or {@link Problem#TOP_LEVEL}. */
    public static String path(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            } else if (ref.getFieldName() != null) {
                path.append(path.length() == 0 ? "" : ".").append(ref.getFieldName());
            }
        }
        return path.length() == 0 ? Problem.TOP_LEVEL : path.toString();
    }

    /** The dotted path of a parser's position, e.g. {@code tenants[2].rate}, or {@code ""} at the root. */
    public static String path(JsonStreamContext context) {
        Deque<String> parts = new ArrayDeque<>();
        for (JsonStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inArray()) {
                parts.push("[" + Math.max(0, c.getCurrentIndex()) + "]");
            } else if (c.getCurrentName() != null) {
                parts.push((c.getParent() == null || c.getParent().inRoot() ? "" : ".") + c.getCurrentName());
            }
        }
        return String.join("", parts);
    }

    /** The field a syntax error was found in, from the parser's position; {@code ""} when unknown or at the root. */
    public static String parserPath(JacksonException e) {
        return e.getProcessor() instanceof JsonParser parser ? path(parser.getParsingContext()) : "";
    }

    /**
     * The line of the error (from 1), or 0 when Jackson does not know it. For a YAML syntax error, the
     * line of the problem itself (SnakeYAML's problem mark), not of the construct it was reading.
     */
    public static int line(JacksonException e) {
        MarkedYAMLException yaml = yamlSyntax(e);
        if (yaml != null && yaml.getProblemMark() != null) {
            return yaml.getProblemMark().getLine() + 1;
        }
        return e.getLocation() == null ? 0 : Math.max(0, e.getLocation().getLineNr());
    }

    /** Whether {@code e} is a syntax error of YAML, which SnakeYAML marked: {@link #reason} words it. */
    public static boolean yamlSyntaxError(JacksonException e) {
        return yamlSyntax(e) != null;
    }

    /** SnakeYAML's own syntax error behind {@code e}, or null. */
    private static MarkedYAMLException yamlSyntax(Throwable e) {
        return cause(e, MarkedYAMLException.class);
    }

    /** {@code " at line N"}, or {@code ""} when the line is not known. */
    public static String atLine(JacksonException e) {
        int line = line(e);
        return line > 0 ? " at line " + line : "";
    }

    /**
     * Where a syntax error is, for "not valid YAML{where}: reason": {@code " at line 7, field
     * tenants[2].rate"}, either part left out when Jackson does not know it, or {@code ""}.
     */
    public static String where(JacksonException e) {
        StringBuilder where = new StringBuilder(atLine(e));
        // At a YAML syntax error the parser's field is the one before the problem: only the line is told.
        String field = yamlSyntaxError(e) ? "" : parserPath(e);
        if (!field.isEmpty()) {
            // Where a field name was expected, the parser's field is the one before it.
            boolean nameExpected =
                    e.getOriginalMessage() != null && e.getOriginalMessage().contains("start field name");
            where.append(where.length() == 0 ? " " : ", ")
                    .append(nameExpected ? "after field " : where.length() == 0 ? "at field " : "field ")
                    .append(field);
        }
        return where.toString();
    }

    /**
     * The value as written when Jackson refused one of YAML's non-finite floats ({@code .nan},
     * {@code .inf}, {@code -.Inf}), else {@code null}.
     */
    public static String nonFiniteValue(JacksonException e) {
        Matcher m = NOT_FINITE.matcher(e.getOriginalMessage() == null ? "" : e.getOriginalMessage());
        return m.find() ? m.group(1) : null;
    }

    /**
     * The first line of Jackson's own message, without its source excerpt: a closing remark such as
     * {@code (start marker at [Source: ...])} or {@code (for Array starting at [Source: ...])} is cut. Said in
     * JSON's words (arrays and objects) when {@code e} is a JSON parser's, else in YAML's (lists and mappings);
     * a reader that knows its document is JSON says so with {@link #reason(JacksonException, boolean)}.
     */
    public static String reason(JacksonException e) {
        return reason(e, jsonParser(e));
    }

    /**
     * {@link #reason(JacksonException)}, in the words of a JSON document when {@code json} (arrays and objects),
     * else of YAML (lists and mappings).
     */
    public static String reason(JacksonException e, boolean json) {
        MarkedYAMLException yaml = yamlSyntax(e);
        if (yaml != null) {
            return yamlReason(yaml);
        }
        String message = e.getOriginalMessage();
        if (message == null) {
            return "malformed input";
        }
        String line = message.lines().findFirst().orElse(message);
        Matcher limit = LIMIT.matcher(line);
        if (limit.lookingAt()) {
            // A StreamReadConstraints limit, said without the names of Jackson's settings.
            return switch (limit.group(1)) {
                case "Number value length" ->
                    "a number " + limit.group(2) + " digits long (expected: at most " + limit.group(3) + " digits)";
                case "String value length" ->
                    "a text " + limit.group(2) + " characters long (expected: at most " + limit.group(3)
                            + " characters)";
                case "Document nesting depth" ->
                    (json ? "arrays and objects" : "lists and mappings") + " nested " + limit.group(2)
                            + " levels deep (expected: at most " + limit.group(3) + " levels)";
                default ->
                    limit.group(1).toLowerCase(java.util.Locale.ROOT) + " " + limit.group(2) + " (expected: at most "
                            + limit.group(3) + ")";
            };
        }
        String syntax = jsonReason(line);
        if (syntax != null) {
            return syntax;
        }
        int source = line.indexOf("[Source");
        int remark = source < 0 ? -1 : line.lastIndexOf(" (", source);
        return remark >= 0 ? line.substring(0, remark) : line;
    }

    private static final Pattern UNEXPECTED_CHARACTER =
            Pattern.compile("Unexpected character \\('(.+?)' \\(code [0-9]+\\)\\)(?: in numeric value)?: (.*)");
    private static final Pattern UNRECOGNIZED_TOKEN = Pattern.compile("Unrecognized token '(.*)': was expecting");
    private static final Pattern CLOSE_MARKER = Pattern.compile("Unexpected close marker '(.)': expected '(.)'");

    /**
     * Jackson's usual JSON syntax errors said as what was found where something else belongs, in JSON's words
     * (an array, an object); else null.
     */
    private static String jsonReason(String line) {
        Matcher m = UNEXPECTED_CHARACTER.matcher(line);
        if (m.lookingAt()) {
            String rest = m.group(2);
            String belongs;
            if (rest.contains("start field name")) {
                belongs = "a field name in double quotes";
            } else if (rest.contains("separate Object entries")) {
                belongs = "a comma between fields, or } to close the object";
            } else if (rest.contains("separate Array entries")) {
                belongs = "a comma between items, or ] to close the array";
            } else if (rest.contains("colon to separate field name and value")) {
                belongs = "a colon after the field name";
            } else if (rest.contains("valid value")) {
                belongs = "a value (text in double quotes, a number, an array, an object, true, false or null)";
            } else {
                return null;
            }
            return "found '" + m.group(1) + "' (expected: " + belongs + ")";
        }
        m = UNRECOGNIZED_TOKEN.matcher(line);
        if (m.lookingAt()) {
            return "found " + m.group(1)
                    + " (expected: a value: text in double quotes, a number, an array, an object, true, false or null)";
        }
        m = CLOSE_MARKER.matcher(line);
        if (m.lookingAt()) {
            return "found '" + m.group(1) + "' (expected: '" + m.group(2) + "' to close the "
                    + ("}".equals(m.group(2)) ? "object" : "array") + ")";
        }
        return null;
    }

    private static final Pattern LIMIT =
            Pattern.compile("([A-Z][a-z]+(?: [a-z]+)*) \\(([0-9]+)\\) exceeds the maximum allowed \\(([0-9]+)");

    private static final Pattern ENDS_EARLY = Pattern.compile("expected (.+), but (?:got|found) '?<stream end>'?");

    /**
     * SnakeYAML's problem in words: a tab where indentation belongs, a file that ends inside a
     * construct ({@code {a: 1,}, an open quote), else SnakeYAML's own problem text (not its context,
     * which says only what it was reading).
     */
    private static String yamlReason(MarkedYAMLException yaml) {
        String problem = yaml.getProblem() == null ? "" : yaml.getProblem();
        String context = yaml.getContext() == null ? "" : yaml.getContext();
        if (problem.contains("(TAB)") || problem.contains("\t")) {
            return "found a tab character, which YAML does not allow for indentation (expected: spaces)";
        }
        Matcher early = ENDS_EARLY.matcher(problem);
        if (early.find() || problem.contains("end of stream")) {
            String expected;
            if (context.contains("flow mapping")) {
                expected = "the rest of the {...} mapping, closed by }";
            } else if (context.contains("flow sequence")) {
                expected = "the rest of the [...] list, closed by ]";
            } else if (context.contains("quoted scalar")) {
                expected = "the closing quote";
            } else if (context.contains("flow node")) {
                expected = "a value";
            } else {
                expected = early.find(0) ? early.group(1) : "the rest of the YAML document";
            }
            return "the file ends too early (expected: " + expected + ")";
        }
        if (problem.isEmpty()) {
            return context.isEmpty() ? "malformed YAML" : context;
        }
        Mark mark = yaml.getContextMark();
        return context.isEmpty() || mark == null
                ? problem
                : problem + " (" + context + " from line " + (mark.getLine() + 1) + ")";
    }

    /** Whether the document had no content at all (only comments, or nothing). */
    public static boolean empty(JacksonException e) {
        return e instanceof MismatchedInputException
                && e.getOriginalMessage() != null
                && e.getOriginalMessage().startsWith("No content to map");
    }

    /**
     * A binding error as a {@link Problem}, or {@code null} for any other syntax error (which has no
     * field value; word it with {@link #where}):
     * <ul>
     *   <li>an unknown field: value {@code "unknown field"}, expected {@code "one of"} the known fields;
     *   <li>a value a field cannot take (an enum's unknown name): the value, and what the field takes;
     *   <li>a value of the wrong kind: the value as written (a list or a mapping on one line, cut short when
     *       long: {@link #written}), and what the field takes (for a boolean written in quotes, with why it is
     *       refused: {@link #expectedBoolean}); {@link #WRONG_TYPE} when it cannot be read;
     *   <li>a YAML non-finite float: the value as written, expected {@code "a finite number"};
     *   <li>a key written twice in one mapping: value {@link #DUPLICATE_KEY}.
     * </ul>
     *
     * @param expected what a field of a type takes, in words; {@link #expected(Class)} for the usual words
     */
    public static Problem problem(JacksonException e, Function<Class<?>, String> expected) {
        if (e instanceof UnrecognizedPropertyException unknown) {
            return new Problem(path(unknown), Problem.UNKNOWN_FIELD, "one of " + sorted(unknown.getKnownPropertyIds()));
        }
        if (e instanceof InvalidFormatException invalid) {
            return new Problem(path(invalid), invalid.getValue(), expected.apply(invalid.getTargetType()));
        }
        InputCoercionException tooLarge = cause(e, InputCoercionException.class);
        if (tooLarge != null) {
            Matcher m = OUT_OF_RANGE.matcher(String.valueOf(tooLarge.getOriginalMessage()));
            if (m.find()) {
                String path = e instanceof JsonMappingException mapping ? path(mapping) : parserPath(e);
                return new Problem(
                        path,
                        m.group(1),
                        "a whole number that fits in " + (m.group(2).equals("int") ? 32 : 64) + " bits");
            }
        }
        String message = String.valueOf(e.getOriginalMessage());
        if (e instanceof MismatchedInputException && message.startsWith("Trailing token")) {
            String format = e.getProcessor() instanceof YAMLParser ? "YAML" : "JSON";
            return new Problem(Problem.TOP_LEVEL, AFTER_THE_END, "one " + format + " document, nothing after it");
        }
        if (e instanceof MismatchedInputException mismatch && message.startsWith("Cannot map `null` into type")) {
            // A primitive field: absent (told when its record is complete), or written as null or ~.
            return new Problem(path(mismatch), nullAsWritten(e), expected.apply(mismatch.getTargetType()));
        }
        if (e instanceof MismatchedInputException mismatch && !empty(e)) {
            String value = scalarAsWritten(e, number(mismatch.getTargetType()));
            if (value == null && e instanceof WrongStructure structure) {
                value = structure.written;
            }
            return new Problem(
                    path(mismatch),
                    value != null ? value : WRONG_TYPE,
                    forValue(expected.apply(mismatch.getTargetType()), value));
        }
        String nonFinite = nonFiniteValue(e);
        if (nonFinite != null) {
            return new Problem(parserPath(e), nonFinite, "a finite number");
        }
        Matcher duplicate = DUPLICATE.matcher(e.getOriginalMessage() == null ? "" : e.getOriginalMessage());
        if (duplicate.lookingAt()) {
            String path = parserPath(e);
            return new Problem(path.isEmpty() ? duplicate.group(1) : path, DUPLICATE_KEY, onceEach(jsonParser(e)));
        }
        return null;
    }

    /**
     * {@code words} for a field given {@code value}: a boolean's words ({@link #BOOLEAN} or {@link
     * #BOOLEAN_JSON}, which say the format) as {@link #expectedBoolean} gives them for it; any other as they are.
     */
    private static String forValue(String words, String value) {
        if (BOOLEAN.equals(words) || BOOLEAN_JSON.equals(words)) {
            return expectedBoolean(BOOLEAN_JSON.equals(words), value);
        }
        return words;
    }

    /**
     * The value of a {@link Problem} for a value of the wrong kind that cannot be shown as written (a list or a
     * mapping the parser could not read to its end, or one read by a mapper not built here).
     */
    public static final String WRONG_TYPE = "wrong type";

    /** How many characters of a list or a mapping a message shows, before "…". */
    static final int STRUCTURE_SHOWN = 40;

    /**
     * A list or a mapping where a field takes another kind of value, refused as Jackson refuses it, with the
     * value as written ({@link #written}): read while the parser still stands at it, for {@link #problem}.
     */
    private static final class WrongStructure extends MismatchedInputException {
        private static final long serialVersionUID = 1L;

        /** The value as written, or {@code null} when it could not be read to its end. */
        private final String written;

        WrongStructure(JsonParser parser, String message, JsonLocation at, JavaType type, String written) {
            super(parser, message, at);
            setTargetType(type);
            this.written = written;
        }
    }

    /** Refuses a list or a mapping of the wrong kind with its value as written ({@link WrongStructure}). */
    private static final class ShowWrongStructure extends DeserializationProblemHandler {
        @Override
        public Object handleUnexpectedToken(
                DeserializationContext context, JavaType type, JsonToken token, JsonParser parser, String message)
                throws java.io.IOException {
            if (token != JsonToken.START_ARRAY && token != JsonToken.START_OBJECT) {
                return NOT_HANDLED;
            }
            JsonLocation at = parser.currentTokenLocation();
            String said = message != null
                    ? message
                    : "Cannot deserialize value of type " + ClassUtil.getTypeDescription(type) + " from "
                            + (token == JsonToken.START_ARRAY ? "Array" : "Object") + " value";
            // A JSON document's own parser: shown as JSON; YAML, or a tree read from YAML: in YAML's flow style.
            boolean json =
                    parser instanceof com.fasterxml.jackson.core.base.ParserBase && !(parser instanceof YAMLParser);
            String written;
            try {
                written = written(context.readTree(parser), json);
            } catch (java.io.IOException | RuntimeException unreadable) {
                written = null;
            }
            throw new WrongStructure(parser, said, at, type, written);
        }
    }

    /**
     * A value as an error message shows it, on one line: a list or a mapping in flow style ({@code [1, 2]},
     * {@code {rate: 5}}; with {@code json}, {@code {"rate": 5}}), a text quoted where YAML would not read it as
     * a text ({@code "30"}, {@code "a, b"}; with {@code json}, always), cut to {@value #STRUCTURE_SHOWN}
     * characters and "…".
     */
    public static String written(JsonNode node, boolean json) {
        StringBuilder out = new StringBuilder();
        flow(node, json, out);
        return out.length() > STRUCTURE_SHOWN
                ? out.substring(0, STRUCTURE_SHOWN).stripTrailing() + "…"
                : out.toString();
    }

    /** Appends {@code node} to {@code out} in flow style, stopping once {@code out} is longer than shown. */
    private static void flow(JsonNode node, boolean json, StringBuilder out) {
        if (out.length() > STRUCTURE_SHOWN) {
            return;
        }
        if (node.isArray()) {
            out.append('[');
            for (int i = 0; i < node.size() && out.length() <= STRUCTURE_SHOWN; i++) {
                out.append(i == 0 ? "" : ", ");
                flow(node.get(i), json, out);
            }
            out.append(']');
        } else if (node.isObject()) {
            out.append('{');
            java.util.Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
            for (boolean first = true; fields.hasNext() && out.length() <= STRUCTURE_SHOWN; first = false) {
                Map.Entry<String, JsonNode> field = fields.next();
                out.append(first ? "" : ", ").append(text(field.getKey(), json)).append(": ");
                flow(field.getValue(), json, out);
            }
            out.append('}');
        } else if (node.isTextual()) {
            out.append(text(node.textValue(), json));
        } else if (node.isFloatingPointNumber() && !Double.isFinite(node.doubleValue())) {
            double d = node.doubleValue();
            out.append(json ? String.valueOf(d) : Double.isNaN(d) ? ".nan" : d > 0 ? ".inf" : "-.inf");
        } else {
            out.append(node.isMissingNode() ? "" : node.toString());
        }
    }

    /** A text in flow style: quoted in JSON, and in YAML where it would not read back as this text. */
    private static String text(String text, boolean json) {
        boolean quote = json
                || text.isEmpty()
                || LOOKS_LIKE_NUMBER_OR_BOOLEAN.matcher(text).matches()
                || NOT_PLAIN.matcher(text).find();
        return quote
                ? com.fasterxml.jackson.databind.node.TextNode.valueOf(text).toString()
                : text;
    }

    /** A text YAML's flow style reads otherwise when written without quotes. */
    private static final Pattern NOT_PLAIN = Pattern.compile("[\\[\\]{},:#\"'\\n\\t]|^[\\s\\-?&*!|>%@`]|\\s$");

    /** The value of a {@link Problem} for a field the document does not have and that has no default. */
    public static final String MISSING = "missing";

    /** The value of a {@link Problem} for a second document or stray content after the document. */
    public static final String AFTER_THE_END = "content after the end of the document";

    private static final Pattern OUT_OF_RANGE =
            Pattern.compile("Numeric value \\(([^)]*)\\) out of range of (int|long)\\b");

    /** {@code null} or {@code ~} as written when the parser stands at it, else {@link #MISSING}. */
    private static String nullAsWritten(JacksonException e) {
        if (e.getProcessor() instanceof JsonParser parser && parser.currentToken() == JsonToken.VALUE_NULL) {
            try {
                String text = parser.getText();
                return text == null || text.isBlank() ? "no value" : text;
            } catch (java.io.IOException unreadable) {
                return "null";
            }
        }
        return MISSING;
    }

    private static <T extends Throwable> T cause(Throwable e, Class<T> type) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }

    /** The value of a {@link Problem} for a key written twice in one mapping. */
    public static final String DUPLICATE_KEY = "duplicate key";

    /**
     * What a key written twice breaks, in words: {@code each key once per mapping}, or in a JSON document's
     * words, {@code each key once per object}.
     */
    static String onceEach(boolean json) {
        return "each key once per " + (json ? "object" : "mapping");
    }

    /** Whether {@code e} is the error of a parser of JSON text (not of YAML, nor of a tree). */
    private static boolean jsonParser(JacksonException e) {
        return e.getProcessor() instanceof com.fasterxml.jackson.core.base.ParserBase
                && !(e.getProcessor() instanceof YAMLParser);
    }

    private static final Pattern DUPLICATE = Pattern.compile("Duplicate field '([^']*)'");

    /**
     * The scalar the parser stopped at, as written ({@code two}, {@code 2.5}); a text that reads like
     * a number or a boolean is quoted ({@code "30"}), so the message shows why it is not one. {@code null}
     * when the parser is not at a scalar (a list or a mapping where a value belongs).
     */
    private static String scalarAsWritten(JacksonException e, boolean number) {
        // A JSON string where a number belongs is told with its quotes, which make it a string ("NaN", " 30").
        boolean quote = number
                && e.getProcessor() instanceof com.fasterxml.jackson.core.base.ParserBase
                && !(e.getProcessor() instanceof YAMLParser);
        if (!(e.getProcessor() instanceof JsonParser parser)
                || parser.currentToken() == null
                || !parser.currentToken().isScalarValue()) {
            // A refused coercion says the text in its message: Cannot coerce String value ("30") to ...
            // A text where a list or an object belongs: ... from String value ('default')
            Matcher m = COERCED_STRING.matcher(e.getOriginalMessage() == null ? "" : e.getOriginalMessage());
            if (!m.find()) {
                return null;
            }
            String text = m.group(1) != null ? m.group(1) : m.group(2);
            return quote ? quoted(text) : shown(text);
        }
        try {
            String text = parser.getText();
            if (parser.currentToken() == JsonToken.VALUE_STRING) {
                return quote ? quoted(text) : shown(text);
            }
            return text.length() > 60 ? text.substring(0, 57) + "..." : text;
        } catch (java.io.IOException unreadable) {
            return null;
        }
    }

    /** A string value as written (cut to 57 characters and "..." past 60), quoted when it reads like a number or a boolean. */
    /** A JSON string as written, with its quotes (cut to 57 characters and "..." past 60). */
    private static String quoted(String text) {
        return '"' + (text.length() > 60 ? text.substring(0, 57) + "..." : text) + '"';
    }

    /** Whether {@code type} is a number's. */
    private static boolean number(Class<?> type) {
        return type != null
                && (Number.class.isAssignableFrom(type)
                        || type == double.class
                        || type == float.class
                        || type == int.class
                        || type == long.class
                        || type == short.class
                        || type == byte.class);
    }

    private static String shown(String text) {
        String cut = text.length() > 60 ? text.substring(0, 57) + "..." : text;
        if (text.isEmpty() || LOOKS_LIKE_NUMBER_OR_BOOLEAN.matcher(text).matches()) {
            return '"' + cut + '"';
        }
        return cut;
    }

    private static final Pattern COERCED_STRING = Pattern.compile("String value \\((?:\"([^\"]*)\"|'([^']*)')\\)");

    private static final Pattern LOOKS_LIKE_NUMBER_OR_BOOLEAN = Pattern.compile(
            "(?i)[-+]?[0-9.]+([eE][-+]?[0-9]+)?|[-+]?\\.?(nan|inf|infinity)|true|false|yes|no|on|off|null|~");

    /**
     * What a boolean field of a JSON document takes, in words: true or false, JSON's only booleans. The words of
     * a reader that reads JSON only ({@link #json()}), or a file it knows to be JSON; else {@link #BOOLEAN}.
     */
    public static final String BOOLEAN_JSON = "true or false";

    /**
     * What a boolean field takes, in words: true or false, and in YAML also what YAML 1.1 reads as a boolean,
     * unquoted: yes, no, on and off, each in lower case, Capitalized or in upper case ({@link #yaml()} reads them
     * so; a quoted one is text, and y or n are text). A JSON document takes only true or false
     * ({@link #BOOLEAN_JSON}). The one wording of every reader built here, so that each says the same.
     */
    public static final String BOOLEAN =
            BOOLEAN_JSON + "; in YAML also yes, no, on or off, unquoted, each also Capitalized or in UPPER case";

    /** Said after true or false when a boolean was written in quotes: why it is refused. */
    private static final String QUOTED_BOOLEAN = ", unquoted: in quotes it is a text, not a boolean";

    /** A boolean of YAML 1.1 as {@link #yaml()} reads it, unquoted; JSON's are true and false alone. */
    private static final Pattern YAML_BOOLEAN =
            Pattern.compile("true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF");

    /**
     * What a boolean field takes, in words ({@link #BOOLEAN_JSON} for a JSON document, else {@link #BOOLEAN}),
     * for a field given {@code value}, as a message shows it: a boolean of that format in quotes ({@code "true"},
     * in YAML also {@code "yes"} or {@code "Off"}) is a text, and the words say so after true or false.
     */
    public static String expectedBoolean(boolean json, String value) {
        String words = json ? BOOLEAN_JSON : BOOLEAN;
        boolean quoted = value != null && value.length() > 2 && value.startsWith("\"") && value.endsWith("\"");
        String text = quoted ? value.substring(1, value.length() - 1) : null;
        if (text == null
                || !(json
                        ? text.equals("true") || text.equals("false")
                        : YAML_BOOLEAN.matcher(text).matches())) {
            return words;
        }
        return BOOLEAN_JSON + QUOTED_BOOLEAN + words.substring(BOOLEAN_JSON.length());
    }

    /**
     * What a field of {@code type} takes, in words ({@link #expected(Class)}), for a document known to be JSON
     * when {@code json}, in JSON's words: a boolean then takes only {@link #BOOLEAN_JSON}, a list is an array and
     * a mapping an object.
     */
    public static String expected(Class<?> type, boolean json) {
        if (!json || type == null) {
            return expected(type);
        }
        if (type == Boolean.class || type == boolean.class) {
            return BOOLEAN_JSON;
        }
        if (Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "an array";
        }
        if (Map.class.isAssignableFrom(type)) {
            return "an object of names to values";
        }
        return expected(type);
    }

    /** What a field of {@code type} takes, in words; {@code "another type"} when unknown. */
    public static String expected(Class<?> type) {
        if (type == null) {
            return "another type";
        }
        if (type.isEnum()) {
            return "one of "
                    + java.util.Arrays.stream(type.getEnumConstants())
                            .map(Object::toString)
                            .collect(Collectors.joining(", "));
        }
        if (type == Integer.class
                || type == Long.class
                || type == int.class
                || type == long.class
                || type == Short.class
                || type == short.class) {
            return "a whole number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return BOOLEAN;
        }
        if (Number.class.isAssignableFrom(type) || type.isPrimitive()) {
            return "a number";
        }
        if (Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "a list";
        }
        if (Map.class.isAssignableFrom(type)) {
            return "a mapping of names to values";
        }
        if (type == String.class) {
            return "a string";
        }
        return "an object";
    }

    private static String sorted(Collection<Object> names) {
        return names.stream().map(String::valueOf).sorted().collect(Collectors.joining(", "));
    }
}
