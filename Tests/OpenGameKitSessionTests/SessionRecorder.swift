import Dispatch
import Foundation
import LANTestSupport
import NetworkFaultProxy
import NIOCore
import Synchronization
@testable import OpenGameKit

/// Test support: a session delegate and data handler that records everything it is told.
final class SessionRecorder: GKSessionDelegate, Sendable {
    enum Event: Equatable, Sendable {
        case state(String, GKPeerConnectionState)
        case request(String)
        case failed(String, GKSessionError.Code)
        case sessionFailed
    }

    let queue = DispatchQueue(label: "SessionRecorder")
    private let recorded = Mutex<[Event]>([])
    private let received = Mutex<[(data: Data, peer: String)]>([])
    private let autoAnswer = Mutex<Bool?>(nil)

    var events: [Event] { recorded.withLock { $0 } }
    var messages: [(data: Data, peer: String)] { received.withLock { $0 } }
    var messageCount: Int { received.withLock { $0.count } }

    /// Accept (true) or deny (false) every request as it arrives; nil leaves requests pending.
    func answerRequests(_ accept: Bool?) { autoAnswer.withLock { $0 = accept } }

    func attach(to session: GKSession) {
        session.delegateQueue = queue
        session.delegate = self
        session.setDataReceiveHandler { [weak self] data, peer, _ in
            self?.received.withLock { $0.append((data, peer)) }
        }
    }

    func has(_ event: Event) -> Bool { events.contains(event) }

    func session(_ session: GKSession, peer peerID: String, didChange state: GKPeerConnectionState) {
        recorded.withLock { $0.append(.state(peerID, state)) }
    }

    func session(_ session: GKSession, didReceiveConnectionRequestFromPeer peerID: String) {
        recorded.withLock { $0.append(.request(peerID)) }
        switch autoAnswer.withLock({ $0 }) {
        case true?: try? session.acceptConnection(fromPeer: peerID)
        case false?: session.denyConnection(fromPeer: peerID)
        case nil: break
        }
    }

    func session(_ session: GKSession, connectionWithPeerFailed peerID: String, withError error: any Error) {
        recorded.withLock { $0.append(.failed(peerID, (error as? GKSessionError)?.code ?? .communicationsFailure)) }
    }

    func session(_ session: GKSession, didFailWithError error: any Error) {
        recorded.withLock { $0.append(.sessionFailed) }
    }
}

/// A fresh random session id, so concurrently running tests never see each other.
func uniqueSessionID(_ prefix: String) -> String {
    prefix + String(UInt32.random(in: 10_000...99_999))
}

/// Creates a session on `lo` with a recorder attached; with `passphrase` and on `eventLoop` if given.
func makeSession(
    _ sessionID: String, _ name: String, _ mode: GKSessionMode, passphrase: String? = nil, eventLoop: (any EventLoop)? = nil
) throws -> (GKSession, SessionRecorder) {
    let session = try GKSession(
        sessionID: sessionID, displayName: name, sessionMode: mode, passphrase: passphrase, interfaceName: LoopbackMulticast.interface,
        eventLoop: eventLoop)
    let recorder = SessionRecorder()
    recorder.attach(to: session)
    return (session, recorder)
}

/// Two peer-mode sessions that have found and connected to each other (A asked, B accepted); on the given event
/// loops, if any.
func connectedPair(
    _ prefix: String, eventLoopOfA: (any EventLoop)? = nil, eventLoopOfB: (any EventLoop)? = nil
) async throws -> (a: GKSession, ra: SessionRecorder, b: GKSession, rb: SessionRecorder) {
    let id = uniqueSessionID(prefix)
    let (a, ra) = try makeSession(id, "Alice", .peer, eventLoop: eventLoopOfA)
    let (b, rb) = try makeSession(id, "Bob", .peer, eventLoop: eventLoopOfB)
    rb.answerRequests(true)
    a.isAvailable = true
    b.isAvailable = true
    try await waitUntil("\(a.displayName) found \(b.displayName)") { a.peers(with: .available).contains(b.peerID) }
    a.connect(toPeer: b.peerID, withTimeout: 5)
    do {
        try await waitUntil("both sides connected") { ra.has(.state(b.peerID, .connected)) && rb.has(.state(a.peerID, .connected)) }
    } catch let timeout as WaitTimeout {
        throw WaitTimeout(condition: "\(timeout.condition); events \(ra.events) \(rb.events)", waited: timeout.waited)
    }
    return (a, ra, b, rb)
}
