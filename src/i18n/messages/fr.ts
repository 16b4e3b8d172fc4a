import type { Messages } from './en.js';

/** « N secondes » ou « N minutes ». */
function wait(seconds: number): string {
  if (seconds < 90) return `${seconds} ${seconds <= 1 ? 'seconde' : 'secondes'}`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/** The French texts (formal address, "vous"). */
export const fr: Messages = {
  signInTitle: 'Se connecter',
  signInToProduct: (product) => `Se connecter à ${product}`,
  signInContinueTo: (app) => `pour continuer vers ${app}`,
  usernameLabel: "Nom d'utilisateur",
  passwordLabel: 'Mot de passe',
  signInButton: 'Se connecter',
  wrongCredentials: "Nom d'utilisateur ou mot de passe incorrect.",
  tooManyFailedSignIns: (seconds) => `Trop de tentatives de connexion échouées. Pour votre sécurité, réessayez dans ${wait(seconds)}.`,

  consentTitle: "Autoriser l'accès ?",
  consentHeading: (app) => `Autoriser ${app} à accéder à votre compte ?`,
  consentRegisteredBy: (owner) => `Enregistrée par ${owner}`,
  consentThePlatform: 'la plateforme',
  consentAsks: 'Cette application demande à :',
  consentNotAvailable: "(non disponible : vous ne disposez pas de cette autorisation)",
  allowButton: 'Autoriser',
  denyButton: 'Refuser',

  scopeOpenid: 'Savoir qui vous êtes (votre identifiant utilisateur)',
  scopeProfile: 'Voir votre nom',
  scopeEmail: 'Voir votre adresse e-mail',
  scopeOfflineAccess: 'Rester connecté pendant votre absence',
  scopeManagementApi: "Configuration des intégrations",
  scopeManagement: 'Créer et modifier les intégrations de votre organisation (configurations de clients et enregistrements d’applications)',

  signOutTitle: 'Se déconnecter',
  signOutHeading: 'Se déconnecter',
  signOutAppAsks: (app) => `${app} vous demande de vous déconnecter.`,
  signOutQuestion: 'Voulez-vous vous déconnecter ?',
  signOutPasswordNextTime: 'Votre mot de passe vous sera demandé la prochaine fois qu’une application vous connectera.',
  signOutButton: 'Se déconnecter',
  notSignedInTitle: 'Déconnecté',
  notSignedInHeading: 'Vous n’êtes pas connecté',
  notSignedInBackTo: (app) => `Cliquez sur « Continuer » pour revenir à ${app}.`,
  notSignedInBack: 'Cliquez sur « Continuer » pour revenir en arrière.',
  notSignedInNothingToEnd: 'Il n’y a aucune session à fermer.',
  continueButton: 'Continuer',
  signedOutTitle: 'Déconnecté',
  signedOutHeading: 'Vous êtes déconnecté',
  signedOutOfApp: (app) => `Vous vous êtes déconnecté de ${app} et de ce service de connexion.`,
  signedOutOfService: 'Vous vous êtes déconnecté de ce service de connexion.',
  signedOutClose: 'Vous pouvez fermer cette fenêtre.',

  errorTitle: 'Erreur de connexion',
  errorHeading: 'La connexion ne peut pas se poursuivre',
  errorReturnToApp: 'Revenez à l’application et réessayez. Si le problème persiste, contactez son éditeur.',
  errorDetails: 'Détails',
  waitHeading: 'Veuillez patienter un instant',
  tooManyRequests: (seconds) => `Trop de tentatives de connexion depuis votre réseau. Réessayez dans ${wait(seconds)}.`,
  requestTooLarge: (bytes) => `La demande de connexion dépasse ${bytes} octets.`,
  requestNotAForm: 'La requête doit être un formulaire (application/x-www-form-urlencoded) contenant chaque paramètre une seule fois.',
  serviceUnavailable: 'Le service est temporairement indisponible. Réessayez dans un instant.',
  requestFailed: 'La requête n’a pas pu aboutir.',
  methodNotAllowed: 'Méthode non autorisée.',
  formFromOtherSite: 'Ce formulaire a été envoyé depuis un autre site.',
  formExpired: 'Ce formulaire a expiré. Revenez à l’application et connectez-vous à nouveau.',
  formTooLarge: 'Le formulaire est trop volumineux.',
  formEncoding: 'Cet encodage de formulaire n’est pas pris en charge.',
  signInExpired: 'Cette connexion a expiré ou est déjà terminée. Revenez à l’application et recommencez.',
  signInOtherBrowser: 'Cette connexion n’appartient pas à ce navigateur.',
  signInStepOver: 'Cette étape de connexion est terminée.',
  signInPageMissing: 'Cette page de connexion n’existe pas.',
  appNotRegistered: 'Cette application n’est plus enregistrée.',
  sessionEnded: 'Votre session a expiré. Revenez à l’application et connectez-vous à nouveau.',
  chooseAllowOrDeny: 'Choisissez « Autoriser » ou « Refuser ».',
};
