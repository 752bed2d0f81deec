package dev.tailor.heart.controller;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The fabric8 mock API server in CRUD mode, except that requests chosen by a test are never
 * answered (their answer is held back for an hour, longer than any test), as an API server that
 * stalls some calls does: the client waits for headers that do not come, while every other call
 * is answered at once. A test may also hold one request in the client before it is sent, until it
 * says (a slow call, made to happen at a chosen instant), or answer chosen requests itself (a watch
 * whose WebSocket it drives).
 */
final class StallingApiServer implements AutoCloseable {

    /**
     * Requests with {@code method} whose path (query included) matches {@code path}, from the client
     * named {@code replica} (see {@link #client(String)}), or from any client when it is {@code null}.
     */
    record Stall(String method, Pattern path, String replica, AtomicInteger arrived) {

        /** How many such requests have arrived (and hang) so far. */
        int count() {
            return arrived.get();
        }
    }

    /**
     * The next request with {@code method} whose path (query included) matches {@code path}, sent
     * from a thread named {@code thread}, waits in the client before it is sent: {@code reached}
     * counts down when it gets there, and it goes on once {@code released} is counted down, the
     * server is closed, or its thread is interrupted (a loop that closes interrupts its rounds thread),
     * never on real time, however long the test takes to get there.
     */
    record Hold(String method, Pattern path, String thread, CountDownLatch reached, CountDownLatch released) {}

    /**
     * Requests with {@code method} whose path (query included) matches {@code path} are answered by
     * {@code response} (e.g. a watch's WebSocket that the test drives) instead of the API server's
     * usual answer, until {@link #release(Answer)}.
     */
    record Answer(
            String method, Pattern path, Function<RecordedRequest, MockResponse> response, AtomicInteger arrived) {

        /** How many such requests have arrived so far. */
        int count() {
            return arrived.get();
        }
    }

    /** The header naming the client a request came from ({@link #client(String)}). */
    private static final String REPLICA = "X-Test-Replica";

    private final KubernetesMockServer server;
    private final int requestTimeoutMillis;
    private final List<KubernetesClient> clients = new CopyOnWriteArrayList<>();
    private final List<Stall> stalls = new CopyOnWriteArrayList<>();
    private final List<Answer> answers = new CopyOnWriteArrayList<>();
    private final List<Hold> holds = new CopyOnWriteArrayList<>();
    /** Every hold ever asked for, so that closing releases the ones waiting too. */
    private final List<Hold> allHolds = new CopyOnWriteArrayList<>();
    /**
     * A client of the server whose calls time out after {@code requestTimeoutMillis}, or never (0): a
     * stalled call then hangs until the server closes.
     */
    final KubernetesClient client;

    /** @param requestTimeoutMillis the clients' request timeout; 0 for none (stalled calls hang until closed) */
    StallingApiServer(int requestTimeoutMillis) {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        Dispatcher crud = new KubernetesMixedDispatcher(responses);
        Dispatcher dispatcher = new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                for (Stall stall : stalls) {
                    if (stall.method().equalsIgnoreCase(request.getMethod())
                            && stall.path().matcher(request.getPath()).matches()
                            && (stall.replica() == null || stall.replica().equals(request.getHeader(REPLICA)))) {
                        stall.arrived().incrementAndGet();
                        return new MockResponse()
                                .setResponseCode(504)
                                .setBody("{}")
                                .setBodyDelay(1, TimeUnit.HOURS);
                    }
                }
                for (Answer answer : answers) {
                    if (answer.method().equalsIgnoreCase(request.getMethod())
                            && answer.path().matcher(request.getPath()).matches()) {
                        answer.arrived().incrementAndGet();
                        return answer.response().apply(request);
                    }
                }
                return crud.dispatch(request);
            }

            @Override
            public void shutdown() {
                crud.shutdown();
            }

            @Override
            public void releaseResources() {
                crud.releaseResources();
            }
        };
        this.requestTimeoutMillis = requestTimeoutMillis;
        server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
        server.init();
        Interceptor holding = new Interceptor() {
            @Override
            public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
                String path = request.uri().getRawPath()
                        + (request.uri().getRawQuery() == null
                                ? ""
                                : "?" + request.uri().getRawQuery());
                for (Hold hold : holds) {
                    if (hold.method().equalsIgnoreCase(request.method())
                            && hold.path().matcher(path).matches()
                            && Thread.currentThread().getName().equals(hold.thread())
                            && holds.remove(hold)) {
                        hold.reached().countDown();
                        try {
                            hold.released().await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }
            }
        };
        client = server.createClient(builder -> builder.editOrNewConfig()
                .withRequestTimeout(requestTimeoutMillis)
                .endConfig()
                .withHttpClientBuilderConsumer(http -> http.addOrReplaceInterceptor("hold", holding)));
    }

    /** From now on, requests with {@code method} whose path (with its query) matches {@code pathRegex} hang. */
    Stall stall(String method, String pathRegex) {
        return stall(method, pathRegex, null);
    }

    /** As {@link #stall(String, String)}, for the requests of the client named {@code replica} only. */
    Stall stall(String method, String pathRegex, String replica) {
        Stall stall = new Stall(method, Pattern.compile(pathRegex), replica, new AtomicInteger());
        stalls.add(stall);
        return stall;
    }

    /**
     * Another client of the server (same request timeout), whose requests carry {@code replica}'s
     * name, so that a test can stall one replica's calls while the others' are answered (a replica
     * cut off from the API server). Closed with the server.
     */
    KubernetesClient client(String replica) {
        Interceptor naming = new Interceptor() {
            @Override
            public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
                builder.header(REPLICA, replica);
            }
        };
        KubernetesClient named = server.createClient(builder -> builder.editOrNewConfig()
                .withRequestTimeout(requestTimeoutMillis)
                .endConfig()
                .withHttpClientBuilderConsumer(http -> http.addOrReplaceInterceptor("replica", naming)));
        clients.add(named);
        return named;
    }

    /** The next such request from {@code thread} waits in the client until released (see {@link Hold}). */
    Hold hold(String method, String pathRegex, String thread) {
        Hold hold = new Hold(method, Pattern.compile(pathRegex), thread, new CountDownLatch(1), new CountDownLatch(1));
        holds.add(hold);
        allHolds.add(hold);
        return hold;
    }

    /** From now on, requests with {@code method} whose path (with its query) matches {@code pathRegex} get {@code response}. */
    Answer answer(String method, String pathRegex, Function<RecordedRequest, MockResponse> response) {
        Answer answer = new Answer(method, Pattern.compile(pathRegex), response, new AtomicInteger());
        answers.add(answer);
        return answer;
    }

    /** Requests matching {@code answer} get the API server's usual answer again. */
    void release(Answer answer) {
        answers.remove(answer);
    }

    /** Requests matching {@code stall} are answered again (the ones already hanging stay so). */
    void release(Stall stall) {
        stalls.remove(stall);
    }

    /** Its configuration (e.g. to build a second client). */
    Config config() {
        return client.getConfiguration();
    }

    @Override
    public void close() {
        stalls.clear();
        answers.clear();
        allHolds.forEach(hold -> hold.released().countDown());
        holds.clear();
        clients.forEach(KubernetesClient::close);
        client.close();
        server.destroy();
    }
}
