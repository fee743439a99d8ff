import Dispatch
import Foundation
import LANTestSupport
import NetworkFaultProxy
import Synchronization
import Testing
@testable import OpenGameKit

/// Test support: a picker delegate that hands out a given session and records the results.
final class PickerRecorder: GKPeerPickerControllerDelegate, Sendable {
    let session: GKSession?
    let selected = Mutex<[GKPeerPickerConnectionType]>([])
    let connected = Mutex<[String]>([])
    let cancelled = Mutex(0)

    init(session: GKSession?) { self.session = session }

    func peerPickerController(_ picker: GKPeerPickerController, didSelect connectionType: GKPeerPickerConnectionType) {
        selected.withLock { $0.append(connectionType) }
    }
    func peerPickerController(_ picker: GKPeerPickerController, sessionFor connectionType: GKPeerPickerConnectionType) -> GKSession? { session }
    func peerPickerController(_ picker: GKPeerPickerController, didConnectPeer peerID: String, toSession session: GKSession) {
        connected.withLock { $0.append(peerID) }
    }
    func peerPickerControllerDidCancel(_ picker: GKPeerPickerController) {
        cancelled.withLock { $0 += 1 }
    }
}

func makePicker() -> (GKPeerPickerController, AsyncStream<String>.Continuation, @Sendable () -> String) {
    let (stream, continuation) = AsyncStream.makeStream(of: String.self)
    let box = OutputBox()
    let picker = GKPeerPickerController(input: stream) { box.append($0) }
    return (picker, continuation, { box.text })
}

final class OutputBox: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

@Suite("Peer picker")
struct PeerPickerTests {
    @Test func modelListsPeersAsksAndConnects() {
        var model = PeerPickerModel(connectionTypes: .nearby)
        #expect(model.start() == [.startNearby])
        #expect(model.nearbyStarted(available: []) == [.show("Looking for nearby players…"), .show("No nearby players yet. Type q to cancel.")])
        #expect(model.peerAvailable("b", name: "Bob") == [.show("Nearby players:\n  1) Bob\nType a number to connect, or q to cancel.")])
        _ = model.peerAvailable("c", name: "Carol")
        #expect(model.peerGone("b") == [.show("Nearby players:\n  1) Carol\nType a number to connect, or q to cancel.")])
        #expect(model.line("7") == [.show("Type a number from 1 to 1, or q to cancel.")])
        #expect(model.line("1") == [.show("Connecting to Carol…"), .connect("c")])
        #expect(
            model.failed("c", name: "Carol", reason: "Carol declined the connection.").first
                == .show("Could not connect to Carol: Carol declined the connection."))
        #expect(model.request(from: "d", name: "Dave") == [.show("Dave wants to connect. Accept? [y/n]")])
        #expect(model.line("1") == [.show("Dave wants to connect. Accept? [y/n]")])
        #expect(model.line("y") == [.show("Accepting Dave…"), .accept("d")])
        #expect(model.connected("d", name: "Dave") == [.show("Connected to Dave."), .finishConnected("d")])
        #expect(model.line("q").isEmpty)
    }

    @Test func modelOffersOnlineAndCancels() {
        var both = PeerPickerModel(connectionTypes: [.nearby, .online])
        #expect(both.start().first.map { if case .show(let text) = $0 { text.contains("2) Online") } else { false } } == true)
        #expect(both.line("2") == [.chooseOnline])
        var connecting = PeerPickerModel(connectionTypes: .nearby)
        _ = connecting.start()
        _ = connecting.nearbyStarted(available: [("b", "Bob")])
        _ = connecting.line("1")
        _ = connecting.request(from: "x", name: "X")
        #expect(connecting.inputEnded() == [.cancelConnect("b"), .deny("x"), .show("Cancelled."), .finishCancelled])
    }

    /// The seed: "When a user picks a network, the controller calls the delegate's didSelectConnectionType". A
    /// picker offering nearby alone has nothing to pick, so nothing is reported; choosing from the menu is.
    @Test func onlyARealChoiceIsReported() {
        var nearbyOnly = PeerPickerModel(connectionTypes: .nearby)
        #expect(nearbyOnly.start() == [.startNearby])
        var both = PeerPickerModel(connectionTypes: [.nearby, .online])
        _ = both.start()
        #expect(both.line("3") == [.show("Type 1 for nearby, 2 for online, or q to cancel.")])
        #expect(both.line("1") == [.chooseNearby, .startNearby])
    }

    /// Online play is offered beside nearby play, never alone: such a mask is refused with a clear error and the
    /// previous mask stays.
    @Test func anOnlineOnlyMaskIsRefused() throws {
        let (picker, _, _) = makePicker()
        let refused = #expect(throws: GKError.self) { try picker.setConnectionTypesMask(.online) }
        #expect(refused?.code == .invalidParameter)
        #expect(refused?.message.contains("online alone is not allowed") == true)
        #expect(refused?.message.contains("[.nearby, .online]") == true)
        #expect(throws: GKError.self) { try picker.setConnectionTypesMask([]) }
        #expect(throws: GKError.self) { try picker.setConnectionTypesMask(GKPeerPickerConnectionType(rawValue: 1 << 5).union(.nearby)) }
        #expect(picker.connectionTypesMask == .nearby)
        picker.connectionTypesMask = .online
        #expect(picker.connectionTypesMask == .nearby)
        try picker.setConnectionTypesMask([.nearby, .online])
        #expect(picker.connectionTypesMask == [.nearby, .online])
    }

    @Test(.timeLimit(.minutes(1)))
    func choosingOnlineHandsControlBack() async throws {
        let (picker, input, _) = makePicker()
        let recorder = PickerRecorder(session: nil)
        picker.delegate = recorder
        picker.connectionTypesMask = [.nearby, .online]
        picker.show()
        #expect(picker.isVisible)
        input.yield("2")
        try await waitUntil("the delegate heard online chosen and the picker closed") { recorder.selected.withLock { $0 } == [.online] && !picker.isVisible }
        #expect(recorder.cancelled.withLock { $0 } == 0)
    }

    @Test(.timeLimit(.minutes(1)), .enabled(if: LoopbackMulticast.isAvailable, Comment(rawValue: LoopbackMulticast.skipMessage)))
    func twoPickersConnectEndToEnd() async throws {
        let id = uniqueSessionID("pick")
        let (sessionA, recorderA) = try makeSession(id, "Alice", .peer)
        let (sessionB, _) = try makeSession(id, "Bob", .peer)
        let (pickerA, inputA, outputA) = makePicker()
        let (pickerB, inputB, outputB) = makePicker()
        let delegateA = PickerRecorder(session: sessionA)
        let delegateB = PickerRecorder(session: sessionB)
        pickerA.delegate = delegateA
        pickerB.delegate = delegateB
        pickerA.show()
        pickerB.show()

        try await waitUntil("Alice's picker lists Bob") { outputA().contains("1) Bob") }
        inputA.yield("1")
        try await waitUntil("Bob's picker asks to accept Alice") { outputB().contains("Alice wants to connect. Accept? [y/n]") }
        inputB.yield("y")
        try await waitUntil("both delegates heard the connection") {
            delegateA.connected.withLock { $0 } == [sessionB.peerID] && delegateB.connected.withLock { $0 } == [sessionA.peerID]
        }
        #expect(!pickerA.isVisible && !pickerB.isVisible)
        #expect(outputA().contains("Connected to Bob."))
        #expect(delegateA.selected.withLock { $0 }.isEmpty)  // nearby was the only type: nothing was chosen
        #expect(sessionA.delegate === recorderA)  // given back
        #expect(sessionA.peers(with: .connected) == [sessionB.peerID])
        try sessionA.send(Data("hello".utf8), toPeers: [sessionB.peerID], with: .reliable)
        await sessionA.invalidate()
        await sessionB.invalidate()
    }

    @Test(.timeLimit(.minutes(1)), .enabled(if: LoopbackMulticast.isAvailable, Comment(rawValue: LoopbackMulticast.skipMessage)))
    func quittingCancels() async throws {
        let (session, _) = try makeSession(uniqueSessionID("quit"), "Solo", .peer)
        let (picker, input, output) = makePicker()
        let delegate = PickerRecorder(session: session)
        picker.delegate = delegate
        picker.show()
        try await waitUntil("the picker looks for players") { output().contains("Looking for nearby players") }
        input.yield("q")
        try await waitUntil("the delegate heard the cancel") { delegate.cancelled.withLock { $0 } == 1 }
        #expect(!picker.isVisible)
        await session.invalidate()
    }
}
