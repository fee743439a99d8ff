import AsyncHTTPClient
import Foundation
import NIOCore
import NetworkFaultProxy
import NIOConcurrencyHelpers

/// A browser of a live server's Game Center web app, over real HTTP: it keeps the cookies the pages set, does not
/// follow redirects (so a test sees the `303` and its `Location`), and submits forms with the page's CSRF token.
struct WebAppBrowser {
    /// An answer as a browser gets it.
    struct Page {
        let status: Int
        /// The `Location` of a redirect.
        let location: String?
        let html: String

        /// The value of the first field named `name` (a hidden field or a checkbox).
        func field(_ name: String) -> String? {
            guard let range = html.range(of: #"name="\#(name)" value=""#) else { return nil }
            return String(html[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// One client for every live test (it follows no redirects); it lives as long as the test process.
    private static let client = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

    let server: URL
    /// The cookies held, by name.
    private(set) var cookies: [String: String] = [:]

    init(server: URL) {
        self.server = server
    }

    /// A browser signed in to the sandbox through the sign-in form.
    static func signedIn(to server: URL, account: String, password: String) async throws -> WebAppBrowser {
        var browser = WebAppBrowser(server: server)
        let answer = try await browser.submit(
            "/sign-in", on: "/sign-in", [("account", account), ("password", password), ("environment", "sandbox")])
        guard answer.status == 303, browser.cookies["gc_session"] != nil else {
            throw LiveServerError("signing \(account) in on the page failed: \(answer.status) \(answer.html)")
        }
        return browser
    }

    /// `GET path`.
    mutating func get(_ path: String) async throws -> Page {
        try await send(path, form: nil)
    }

    /// `POST path` with `fields`, url-encoded.
    mutating func post(_ path: String, _ fields: [(String, String)]) async throws -> Page {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        return try await send(path, form: body)
    }

    /// Opens `path` and submits its form to `action` with the page's CSRF token and `fields`.
    mutating func submit(_ action: String, on path: String, _ fields: [(String, String)]) async throws -> Page {
        let page = try await get(path)
        return try await post(action, [("csrf", page.field("csrf") ?? "")] + fields)
    }

    /// Opens the live notices (`GET /live`, server-sent events) with this browser's cookies, once the stream has said
    /// it is connected.
    func openLiveNotices() async throws -> LiveNoticesStream {
        var request = HTTPClientRequest(url: server.absoluteString + "/live")
        request.headers.add(name: "Cookie", value: cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; "))
        let response = try await Self.client.execute(request, timeout: .seconds(10))
        guard response.status == .ok else { throw LiveServerError("GET /live answered \(response.status)") }
        let stream = LiveNoticesStream(body: response.body)
        try await waitUntil("/live says it is connected") { try stream.said.contains(": connected") }
        return stream
    }

    /// `GET path`, or `POST path` with `form` (url-encoded) when there is one.
    private mutating func send(_ path: String, form: String?) async throws -> Page {
        var request = HTTPClientRequest(url: server.absoluteString + path)
        if !cookies.isEmpty { request.headers.add(name: "Cookie", value: cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ")) }
        if let form {
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
        }
        let response = try await Self.client.execute(request, timeout: .seconds(10))
        let html = String(buffer: try await response.body.collect(upTo: 1 << 20))
        for header in response.headers["Set-Cookie"] {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
            if value.isEmpty || header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return Page(status: Int(response.status.code), location: response.headers.first(name: "Location"), html: html)
    }
}

/// An open `GET /live`, read to its end by a task of its own.
final class LiveNoticesStream: Sendable {
    /// What the stream said, and how it ended once it has: `nil` for a response that finished, else why it broke off.
    private let state = NIOLockedValueBox<(text: String, ended: (any Error)??)>(("", nil))
    private let reading: Task<Void, Never>

    init(body: HTTPClientResponse.Body) {
        let state = self.state
        reading = Task {
            do {
                for try await chunk in body { state.withLockedValue { $0.text += String(buffer: chunk) } }
                state.withLockedValue { $0.ended = .some(nil) }
            } catch {
                state.withLockedValue { $0.ended = .some(error) }
            }
        }
    }

    deinit { reading.cancel() }

    /// What the stream has said so far; throws when it broke off (the connection was cut before the response ended).
    var said: String {
        get throws {
            let (text, ended) = state.withLockedValue { $0 }
            if case .some(.some(let failure)) = ended { throw LiveServerError("/live broke off: \(failure); it had said: \(text)") }
            return text
        }
    }

    /// Everything the stream said, once the server ended it (a response that finished, not a connection cut off).
    func toEnd(within limit: Duration = .seconds(10)) async throws -> String {
        try await waitUntil("/live ended") {
            _ = try said
            return state.withLockedValue { $0.ended != nil }
        }
        return try said
    }
}
