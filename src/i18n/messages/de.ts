import type { Messages } from './en.js';

/** "N Sekunden" oder "N Minuten". */
function wait(seconds: number): string {
  if (seconds < 90) return `${seconds} ${seconds === 1 ? 'Sekunde' : 'Sekunden'}`;
  return `${Math.ceil(seconds / 60)} Minuten`;
}

/** The German texts (formal address, "Sie"). */
export const de: Messages = {
  signInTitle: 'Anmelden',
  signInToProduct: (product) => `Bei ${product} anmelden`,
  signInContinueTo: (app) => `um mit ${app} fortzufahren`,
  usernameLabel: 'Benutzername',
  passwordLabel: 'Passwort',
  signInButton: 'Anmelden',
  wrongCredentials: 'Benutzername oder Passwort ist falsch.',
  tooManyFailedSignIns: (seconds) => `Zu viele fehlgeschlagene Anmeldeversuche. Zu Ihrer Sicherheit versuchen Sie es bitte in ${wait(seconds)} erneut.`,

  consentTitle: 'Zugriff erlauben?',
  consentHeading: (app) => `Möchten Sie ${app} den Zugriff auf Ihr Konto erlauben?`,
  consentRegisteredBy: (owner) => `Registriert von ${owner}`,
  consentThePlatform: 'der Plattform',
  consentAsks: 'Diese Anwendung möchte:',
  consentNotAvailable: '(nicht verfügbar: Sie haben diese Berechtigung nicht)',
  allowButton: 'Erlauben',
  denyButton: 'Ablehnen',

  scopeOpenid: 'Wissen, wer Sie sind (Ihre Benutzerkennung)',
  scopeProfile: 'Ihren Namen sehen',
  scopeEmail: 'Ihre E-Mail-Adresse sehen',
  scopeOfflineAccess: 'Verbunden bleiben, während Sie abwesend sind',
  scopeManagementApi: 'Integrationseinrichtung',
  scopeManagement: 'Die Integrationen Ihrer Organisation anlegen und ändern (Client-Konfigurationen und App-Registrierungen)',

  signOutTitle: 'Abmelden',
  signOutHeading: 'Abmelden',
  signOutAppAsks: (app) => `${app} bittet Sie, sich abzumelden.`,
  signOutQuestion: 'Möchten Sie sich abmelden?',
  signOutPasswordNextTime: 'Wenn eine Anwendung Sie das nächste Mal anmeldet, werden Sie nach Ihrem Passwort gefragt.',
  signOutButton: 'Abmelden',
  notSignedInTitle: 'Abgemeldet',
  notSignedInHeading: 'Sie sind nicht angemeldet',
  notSignedInBackTo: (app) => `Klicken Sie auf „Weiter“, um zu ${app} zurückzukehren.`,
  notSignedInBack: 'Klicken Sie auf „Weiter“, um zurückzukehren.',
  notSignedInNothingToEnd: 'Es gibt keine Sitzung, die beendet werden müsste.',
  continueButton: 'Weiter',
  signedOutTitle: 'Abgemeldet',
  signedOutHeading: 'Sie sind abgemeldet',
  signedOutOfApp: (app) => `Sie haben sich von ${app} und von diesem Anmeldedienst abgemeldet.`,
  signedOutOfService: 'Sie haben sich von diesem Anmeldedienst abgemeldet.',
  signedOutClose: 'Sie können dieses Fenster jetzt schließen.',

  errorTitle: 'Anmeldefehler',
  errorHeading: 'Die Anmeldung kann nicht fortgesetzt werden',
  errorReturnToApp: 'Kehren Sie zur Anwendung zurück und versuchen Sie es erneut. Wenn das Problem bestehen bleibt, wenden Sie sich an den Anbieter der Anwendung.',
  errorDetails: 'Details',
  waitHeading: 'Bitte warten Sie einen Moment',
  tooManyRequests: (seconds) => `Zu viele Anmeldeversuche aus Ihrem Netzwerk. Bitte versuchen Sie es in ${wait(seconds)} erneut.`,
  requestTooLarge: (bytes) => `Die Anmeldeanfrage ist größer als ${bytes} Bytes.`,
  requestNotAForm: 'Die Anfrage muss ein Formular (application/x-www-form-urlencoded) sein, mit jedem Parameter genau einmal.',
  serviceUnavailable: 'Der Dienst ist vorübergehend nicht verfügbar. Bitte versuchen Sie es gleich noch einmal.',
  requestFailed: 'Die Anfrage konnte nicht ausgeführt werden.',
  methodNotAllowed: 'Diese Methode ist nicht erlaubt.',
  formFromOtherSite: 'Dieses Formular wurde von einer anderen Website gesendet.',
  formExpired: 'Dieses Formular ist abgelaufen. Kehren Sie zur Anwendung zurück und melden Sie sich erneut an.',
  formTooLarge: 'Das Formular ist zu groß.',
  formEncoding: 'Diese Formularkodierung wird nicht unterstützt.',
  signInExpired: 'Diese Anmeldung ist abgelaufen oder wurde bereits abgeschlossen. Kehren Sie zur Anwendung zurück und beginnen Sie erneut.',
  signInOtherBrowser: 'Diese Anmeldung gehört nicht zu diesem Browser.',
  signInStepOver: 'Dieser Anmeldeschritt ist bereits abgeschlossen.',
  signInPageMissing: 'Diese Anmeldeseite gibt es nicht.',
  appNotRegistered: 'Diese Anwendung ist nicht mehr registriert.',
  sessionEnded: 'Ihre Sitzung ist abgelaufen. Kehren Sie zur Anwendung zurück und melden Sie sich erneut an.',
  chooseAllowOrDeny: 'Wählen Sie „Erlauben“ oder „Ablehnen“.',
};
