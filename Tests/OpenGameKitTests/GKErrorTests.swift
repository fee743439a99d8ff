import GameCenterProtocol
import OpenGameKit
import Testing

@Suite struct GKErrorTests {
    @Test(arguments: ErrorCode.allCases)
    func everyWireCodeIsAGKErrorCodeOfTheSameName(_ code: ErrorCode) throws {
        let gk = try #require(GKError.Code(rawValue: code.rawValue))
        #expect(String(describing: gk) == String(describing: code))
    }

    @Test func errorsCompareByCodeAndMessage() {
        #expect(GKError(.invalidPlayer, "x", partialResult: [1]) == GKError(.invalidPlayer, "x"))
        #expect(GKError(.invalidPlayer, "x") != GKError(.invalidPlayer, "y"))
        #expect(GKError(.invalidPlayer, "x", partialResult: ["a"]).partialResult(as: [String].self) == ["a"])
    }
}
