import Foundation
import HTTPTypes
@_spi(Provider) import NativeAuth
import TestSupport
import Testing

/// `HTTPTransport.send(_:body:streamingTo:)`: a successful answer's body goes to the sink as it
/// arrives (AsyncHTTPClientTransport), or in one piece (the protocol's default, which
/// URLSessionTransport has); any other answer comes back whole; a stream that stops ends in a
/// timeout.
@Suite(.testLogging) struct StreamedAnswerTests {
    /// A body of two pieces: 16 KiB (the test server's piece), then the rest.
    static let body = Data(repeating: UInt8(ascii: "a"), count: 16_384) + Data("tail\n".utf8)

    /// The server holds the second piece back until the sink has the first (or 10 seconds pass):
    /// only a transport that hands pieces on as they come gets the first one before the end.
    @Test func aSuccessfulAnswerReachesTheSinkPieceByPiece() async throws {
        let received = Shared(Data())
        let firstBeforeSecond = Shared<Bool?>(nil)
        let server = try await TestHTTPServer.start { _ in
            var response = TestResponse(body: Self.body)
            response.beforePiece = { written in
                guard written == 1 else { return }
                for _ in 0..<1000 where received.value.count < 16_384 {
                    try? await Task.sleep(for: .milliseconds(10))
                }
                firstBeforeSecond.update { $0 = received.value.count == 16_384 }
            }
            return response
        }
        let transport = TransportUnderTest.asyncHTTPClient.make(timeout: .seconds(30))
        let (response, body) = try await transport.send(
            HTTPRequest(method: .get, url: server.url("/events")), body: nil
        ) { piece in
            received.update { $0.append(piece) }
        }
        await server.stop()
        #expect(response.status.code == 200)
        #expect(body.isEmpty, "a streamed body is not returned too")
        #expect(received.value == Self.body)
        #expect(firstBeforeSecond.value == true, "the first piece reached the sink before the second was sent")
    }

    /// A 401 (or any answer that is not a success) is returned whole and never reaches the sink:
    /// the caller acts on it (a refresh, a step-up) and may send again.
    @Test(arguments: TransportUnderTest.allCases)
    func anAnswerThatIsNotASuccessComesBackWhole(kind: TransportUnderTest) async throws {
        let server = try await TestHTTPServer.start { _ in
            TestResponse(
                status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)],
                body: Data("refused".utf8))
        }
        let sunk = Shared(0)
        let (response, body) = try await kind.make().send(
            HTTPRequest(method: .post, url: server.url("/mcp")), body: Data("{}".utf8)
        ) { _ in
            sunk.update { $0 += 1 }
        }
        await server.stop()
        #expect(response.status.code == 401)
        #expect(String(decoding: body, as: UTF8.self) == "refused")
        #expect(sunk.value == 0)
    }

    /// The default implementation (URLSessionTransport's): the whole body, in one piece.
    @Test func theDefaultHandsTheWholeBodyOnInOnePiece() async throws {
        let server = try await TestHTTPServer.start { _ in TestResponse(body: Self.body) }
        let pieces = Shared<[Data]>([])
        let (_, body) = try await TransportUnderTest.urlSession.make().send(
            HTTPRequest(method: .get, url: server.url("/events")), body: nil
        ) { piece in
            pieces.update { $0.append(piece) }
        }
        await server.stop()
        #expect(body.isEmpty)
        #expect(pieces.value == [Self.body])
    }

    /// A stream whose server stops sending after its first piece ends in a timeout, and the error
    /// says the answer stopped (when the head and that piece came within the timeout, which a
    /// heavily loaded test machine may not manage: then it is the timeout of the head).
    @Test func aStreamThatStopsEndsInATimeout() async throws {
        let server = try await TestHTTPServer.start { _ in
            var response = TestResponse(body: Self.body)
            response.beforePiece = { written in
                if written == 1 { try? await Task.sleep(for: .seconds(60)) }
            }
            return response
        }
        let received = Shared(0)
        let error = await #expect(throws: AuthError.self) {
            _ = try await TransportUnderTest.asyncHTTPClient.make(timeout: .seconds(2)).send(
                HTTPRequest(method: .get, url: server.url("/stalls")), body: nil
            ) { piece in
                received.update { $0 += piece.count }
            }
        }
        await server.stop()
        #expect(error?.code == .timeout)
        if received.value > 0 {
            #expect(
                error?.message.contains("stopped: nothing came for 2 seconds") == true, "\(String(describing: error))")
        }
    }

    /// A sink that throws (standard output closed, say) ends the exchange with its own error.
    @Test func aSinkThatThrowsEndsTheExchangeWithItsError() async throws {
        let server = try await TestHTTPServer.start { _ in TestResponse(body: Self.body) }
        let error = await #expect(throws: AuthError.self) {
            // The deadline only bounds a hang: beside the whole suite on two cores, a first answer
            // has taken longer than 30 s to arrive, and the deadline's error hid the sink's.
            _ = try await TransportUnderTest.asyncHTTPClient.make(timeout: .seconds(120)).send(
                HTTPRequest(method: .get, url: server.url("/events")), body: nil
            ) { _ in
                throw AuthError(.configurationInvalid, "the sink is full")
            }
        }
        await server.stop()
        #expect(error?.message == "the sink is full")
    }
}
